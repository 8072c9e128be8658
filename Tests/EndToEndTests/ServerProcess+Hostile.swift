import JSON

#if canImport(Glibc)
import Glibc
#endif

// What the hostile-input tests need beyond the plain pipe harness: the child's memory, writes of
// hundreds of megabytes that cannot hang the test, and reading up to one response.

extension ServerProcess {
    /// A `kB` field of the server's `/proc/<pid>/status`, in megabytes (rounded up): `VmHWM` is its peak
    /// resident set so far, `VmRSS` its current one. Read while the server runs.
    func statusMegabytes(_ field: String) throws -> Int {
        let descriptor = open("/proc/\(pid)/status", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ServerProcessError(description: "cannot open /proc/\(pid)/status: errno \(errno)") }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("\(field):") {
            // "VmHWM:	   28100 kB"
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.count == 3, fields[2] == "kB", let kilobytes = Int(fields[1]) { return (kilobytes + 1023) / 1024 }
        }
        throw ServerProcessError(description: "no \(field) in /proc/\(pid)/status (has the server exited?)")
    }

    /// Writes each chunk `count` times, in order, from a background thread on a duplicate of the server's
    /// stdin, and returns at once. The test meanwhile reads with its deadline, so a server that stops
    /// reading fails the test instead of hanging it, and hundreds of megabytes need not be held at once.
    /// The thread stops at the first failed write (the server is gone).
    func writeInBackground(_ pieces: [(chunk: [UInt8], count: Int)]) throws {
        let descriptor = fcntl(input, F_DUPFD_CLOEXEC, 0)
        guard descriptor >= 0 else { throw ServerProcessError(description: "dup of stdin failed: errno \(errno)") }
        let status = BackgroundWrite(descriptor: descriptor, pieces: pieces).start()
        guard status == 0 else {
            close(descriptor)
            throw ServerProcessError(description: "pthread_create failed: \(status)")
        }
    }

    /// The responses up to and including the one whose id is `id`, in the order they came; notifications
    /// are left out. A batch response (an array) counts as one response.
    func responses(through id: JSONValue, framing: WireFraming) throws -> [JSONValue] {
        var responses: [JSONValue] = []
        while true {
            let message = try receive(framing: framing)
            if message["method"] != nil && message["id"] == nil { continue }
            responses.append(message)
            if message["id"] == id { return responses }
        }
    }
}

/// One background write job; owns its descriptor.
private final class BackgroundWrite {
    let descriptor: Int32
    let pieces: [(chunk: [UInt8], count: Int)]

    init(descriptor: Int32, pieces: [(chunk: [UInt8], count: Int)]) {
        self.descriptor = descriptor
        self.pieces = pieces
    }

    /// Starts a detached thread that writes everything and closes the descriptor; returns
    /// `pthread_create`'s status. Not main-actor code: the thread runs none.
    nonisolated func start() -> Int32 {
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            Unmanaged<BackgroundWrite>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        if status == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<BackgroundWrite>.fromOpaque(context).release()
        }
        return status
    }

    private func run() {
        defer { close(descriptor) }
        for piece in pieces {
            for _ in 0..<piece.count {
                guard writeAll(piece.chunk) else { return }
            }
        }
    }

    private func writeAll(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }
}
