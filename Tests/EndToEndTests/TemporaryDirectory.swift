import Foundation

/// A new directory under the system's temporary folder, removed with everything in it on deinit.
final class TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "storefront-e2e-XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else {
            throw ServerProcessError(description: "mkdtemp failed: errno \(errno)")
        }
        path = String(cString: created)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}
