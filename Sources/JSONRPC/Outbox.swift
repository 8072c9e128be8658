import JSON

/// Outgoing messages, framed and queued as bytes until the transport writes them in one go.
///
/// Everything the server sends goes through here in order, so a notification enqueued before a response
/// is written before it.
@MainActor
public final class Outbox {
    /// The framing of outgoing messages: the one the client spoke (newline-delimited until known).
    public var framing: Framing
    /// Framed bytes not yet written (some may be held: see ``writableCount``).
    public private(set) var pending: [UInt8] = []
    /// What pending bytes wait for before they are written; nil: nothing, they may be written at once.
    /// The server sets its database's log sync, so that nothing it says after a commit leaves before the
    /// commit is on disk.
    public var barrier: (any OutputBarrier)?
    /// Where held bytes start in ``pending``, each run with the generation it waits for (increasing).
    /// (Read ~20 times an action, by the transport's status: without the dynamic exclusivity checks, which
    /// cost more than the read; only this class's main-actor methods touch it, none while another runs.)
    @exclusivity(unchecked) private var holds: [(start: Int, generation: UInt64)] = []
    private var scratch: [UInt8] = []
    /// Called by the transport when pending output has fallen to ``lowWatermark`` or below after being
    /// above it: producers that held back (coalescing their updates) may send again.
    public var onDrain: (@MainActor () -> Void)?
    /// Pending bytes at or below which the outbox counts as drained.
    public var lowWatermark = 256 * 1024
    /// Pending bytes above which producers of optional traffic (state notifications) should hold back.
    public var highWatermark = 1024 * 1024
    private var producerHeldBack = false

    /// Whether a producer of optional traffic should hold back because the client is not reading
    /// (more than ``highWatermark`` bytes pending). A producer told to hold back is called through
    /// ``onDrain`` once the output has drained.
    public func shouldHoldBack() -> Bool {
        guard pending.count > highWatermark else { return false }
        producerHeldBack = true
        return true
    }

    /// An empty outbox.
    public init(framing: Framing = .newlineDelimited) {
        self.framing = framing
    }

    /// Queues one message.
    public func enqueue(_ message: JSONValue) {
        scratch.removeAll(keepingCapacity: true)
        message.serialize(into: &scratch)
        enqueuePayload(scratch)
    }

    /// Queues a success response, written field by field (`{"jsonrpc":"2.0","id":...,"result":...}`).
    public func enqueueResult(_ result: JSONValue, id: RequestID) {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        Self.append(id, to: &scratch)
        scratch.append(contentsOf: #","result":"#.utf8)
        result.serialize(into: &scratch)
        scratch.append(0x7D)
        enqueuePayload(scratch)
    }

    /// Queues a notification `{"jsonrpc":"2.0","method":...,"params":...}`.
    public func enqueueNotification(_ method: String, params: JSONValue) {
        enqueue(["jsonrpc": "2.0", "method": .string(method), "params": params])
    }

    /// Queues a notification whose params `writeParams` serialises itself (compact, members in key
    /// order, as ``JSONValue/serialize(into:)`` writes them): for a producer whose params are cheaper to
    /// write than to build as a value (a state patch).
    public func enqueueNotification(_ method: String, writingParams writeParams: (inout [UInt8]) -> Void) {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: #"{"jsonrpc":"2.0","method":"#.utf8)
        JSONValue.string(method).serialize(into: &scratch)
        scratch.append(contentsOf: #","params":"#.utf8)
        writeParams(&scratch)
        scratch.append(0x7D)
        enqueuePayload(scratch)
    }

    /// Queues already-serialised JSON.
    public func enqueuePayload(_ payload: [UInt8]) {
        if let barrier { hold(from: pending.count, barrier) }
        framing.frame(payload, into: &pending)
    }

    /// Marks the bytes enqueued from `start` on as waiting for the barrier's required generation, unless
    /// it is passed.
    private func hold(from start: Int, _ barrier: any OutputBarrier) {
        let generation = barrier.required
        if let last = holds.last, last.generation >= generation { return }  // they wait already, as long
        if generation <= barrier.reached {
            holds.removeAll()  // every earlier hold waits for less: passed too
            return
        }
        holds.append((start, generation))
    }

    /// How many of the pending bytes may be written now: those before the first run whose generation the
    /// barrier has not reached.
    public var writableCount: Int {
        holds.isEmpty ? pending.count : writableCountLettingGo()
    }

    /// How many of the pending bytes are held for the barrier (0 without one): what is not ``writableCount``.
    /// Cheap when none are, as on every turn of a server that did not just commit.
    public var heldCount: Int {
        holds.isEmpty ? 0 : pending.count - writableCountLettingGo()
    }

    /// ``writableCount`` with bytes held: lets go of the runs whose generation the barrier has reached.
    private func writableCountLettingGo() -> Int {
        let reached = barrier?.reached ?? .max
        var passed = 0
        while passed < holds.count, holds[passed].generation <= reached { passed += 1 }
        if passed > 0 { holds.removeFirst(passed) }
        return holds.first?.start ?? pending.count
    }

    /// Drops the first `count` pending bytes (they were written: never more than ``writableCount``).
    public func consume(_ count: Int) {
        if count == pending.count {
            pending.removeAll(keepingCapacity: pending.capacity <= 1 << 20)
        } else {
            pending.removeFirst(count)
        }
        if !holds.isEmpty {
            for index in holds.indices { holds[index].start -= count }
        }
    }

    /// Tells producers that held back that the client reads again (called by the transport after writes).
    public func noteWritten() {
        guard producerHeldBack, pending.count <= lowWatermark else { return }
        producerHeldBack = false
        onDrain?()
    }

    private static func append(_ id: RequestID, to buffer: inout [UInt8]) {
        switch id {
        case .integer(let integer): buffer.append(contentsOf: String(integer).utf8)
        case .string: id.jsonValue.serialize(into: &buffer)
        }
    }
}

extension RPCError {
    /// The whole error response for `id` (`null` when the id could not be read).
    public func response(id: RequestID?) -> JSONValue {
        ["jsonrpc": "2.0", "id": id?.jsonValue ?? .null, "error": jsonValue]
    }
}
