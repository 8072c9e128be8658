/// Weak references to objects that must be gone at the end of an iteration.
struct Survivors {
    private final class Weak {
        weak var object: AnyObject?
        init(_ object: AnyObject) { self.object = object }
    }

    private var watched: [(name: String, reference: Weak)] = []

    /// Watches `object` under `name` (once per object).
    mutating func watch(_ object: AnyObject?, as name: String) {
        guard let object, !watched.contains(where: { $0.reference.object === object }) else { return }
        watched.append((name, Weak(object)))
    }

    /// The names of the watched objects still alive.
    var alive: [String] { watched.filter { $0.reference.object != nil }.map(\.name) }
}
