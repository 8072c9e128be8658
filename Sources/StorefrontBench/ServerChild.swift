import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A failure that ends the benchmark with a message.
struct BenchError: Error, CustomStringConvertible {
    var description: String
}

/// How messages are framed on the wire.
enum WireFraming: String, CaseIterable {
    case ndjson
    case lsp

    /// `body` framed this way, appended to `buffer`.
    func frame(_ body: String, into buffer: inout [UInt8]) {
        if self == .lsp { buffer.append(contentsOf: "Content-Length: \(body.utf8.count)\r\n\r\n".utf8) }
        buffer.append(contentsOf: body.utf8)
        if self == .ndjson { buffer.append(0x0A) }
    }
}

/// `storefront serve` started over pipes, with a client side that reads answers and checks their ids.
final class ServerChild {
    let pid: pid_t
    let framing: WireFraming
    private var input: Int32
    private let output: Int32
    private var inbox: [UInt8] = []
    private var inboxStart = 0
    private var chunk = [UInt8](repeating: 0, count: 65_536)
    private static let timeoutMilliseconds: Int32 = 30_000

    /// Starts `path serve --framing <framing> <arguments>`; its stdin and stdout are non-blocking pipes.
    init(path: String, framing: WireFraming, arguments extraArguments: [String] = []) throws {
        self.framing = framing
        var toChild: [Int32] = [0, 0], fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else { throw BenchError(description: "pipe: errno \(errno)") }
        for descriptor in toChild + fromChild { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], STDOUT_FILENO)
        let arguments: [String] = [path, "serve", "--framing", framing.rawValue] + extraArguments
        defer {
            close(toChild[0])
            close(fromChild[1])
        }
        do {
            pid = try spawn(arguments, actions: &actions)
        } catch {
            close(toChild[1])
            close(fromChild[0])
            throw error
        }
        input = toChild[1]
        output = fromChild[0]
        for descriptor in [input, output] { _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) }
    }

    deinit {
        if input >= 0 { close(input) }
        close(output)
    }

    /// Writes all of `bytes`, waiting for the pipe when it is full (nothing is read meanwhile).
    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            offset += try writeSome(bytes, from: offset)
            if offset < bytes.count { try wait(for: input, events: POLLOUT) }
        }
    }

    /// Reads the next answer and returns its id.
    func readAnswer() throws -> Int64 {
        while true {
            if let id = try takeAnswer() { return id }
            try wait(for: output, events: POLLIN)
            guard try readSome() else { throw BenchError(description: "the server closed stdout") }
        }
    }

    /// Reads the next message, whatever it is, and returns its body (the frame's bytes without framing).
    func readMessage() throws -> ArraySlice<UInt8> {
        while true {
            if let body = try takeFrame() { return inbox[body] }
            try wait(for: output, events: POLLIN)
            guard try readSome() else { throw BenchError(description: "the server closed stdout") }
        }
    }

    /// The descriptor the server's output is read from, for polling several servers at once
    /// (``pollReadable(_:)``).
    var outputDescriptor: Int32 { output }

    /// Takes the next complete message off what was read so far, without reading; nil when none is
    /// complete. The body is valid until the next read.
    func takeBufferedMessage() throws -> ArraySlice<UInt8>? {
        try takeFrame().map { inbox[$0] }
    }

    /// Reads what the pipe holds now (after ``pollReadable(_:)`` said it holds something).
    /// - Throws: when the server closed its output.
    func readAvailable() throws {
        guard try readSome() else { throw BenchError(description: "the server closed stdout") }
    }

    /// Waits until at least one of `children` has output to read; returns which.
    static func pollReadable(_ children: [ServerChild]) throws -> [Bool] {
        var descriptors = children.map { pollfd(fd: $0.output, events: Int16(POLLIN), revents: 0) }
        guard poll(&descriptors, nfds_t(descriptors.count), timeoutMilliseconds) > 0 else {
            throw BenchError(description: "no server wrote anything within \(timeoutMilliseconds) ms")
        }
        return descriptors.map { $0.revents != 0 }
    }

    /// CPU time the server has used so far (user and system, every thread), in clock ticks
    /// (`sysconf(_SC_CLK_TCK)` per second), from `/proc/<pid>/stat`.
    func cpuTicks() throws -> Int {
        guard let file = fopen("/proc/\(pid)/stat", "r") else { throw BenchError(description: "cannot read /proc/\(pid)/stat") }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 1024)
        guard fgets(&line, Int32(line.count), file) != nil else { throw BenchError(description: "empty /proc/\(pid)/stat") }
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // After the command name (in parentheses, which may hold spaces): state is field 3, utime 14, stime 15.
        guard let close = text.lastIndex(of: ")") else { throw BenchError(description: "unexpected /proc/\(pid)/stat: \(text)") }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else {
            throw BenchError(description: "unexpected /proc/\(pid)/stat: \(text)")
        }
        return user + system
    }

    /// Time the server's threads have spent on a CPU so far, in nanoseconds, and the context switches they
    /// made (voluntary and not): the sums over `/proc/<pid>/task/*/schedstat` and `status`. Exact where
    /// ``cpuTicks()`` counts whole ticks sampled, which misses most of the short wake-ups of an idle server.
    func schedulerFigures() throws -> SchedulerFigures {
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        var onCPU = 0
        var switches = 0
        for task in tasks {
            let folder = "/proc/\(pid)/task/\(task)"
            // A thread that ended meanwhile is left out.
            guard let schedstat = try? String(contentsOfFile: folder + "/schedstat", encoding: .utf8),
                let status = try? String(contentsOfFile: folder + "/status", encoding: .utf8)
            else { continue }
            onCPU += schedstat.split(separator: " ").first.flatMap { Int($0) } ?? 0
            for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches") || line.hasPrefix("nonvoluntary_ctxt_switches") {
                switches += line.split(separator: "\t").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 0
            }
        }
        return SchedulerFigures(onCPUNanoseconds: onCPU, contextSwitches: switches)
    }

    /// A `kB` figure of `/proc/<pid>/status`, such as `VmRSS` (resident now) or `VmHWM` (peak resident).
    func memoryKiB(_ field: String) throws -> Int {
        guard let file = fopen("/proc/\(pid)/status", "r") else { throw BenchError(description: "cannot read /proc/\(pid)/status") }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard text.hasPrefix(field + ":") else { continue }
            if let kib = Int(text.dropFirst(field.count + 1).filter(\.isNumber)) { return kib }
        }
        throw BenchError(description: "no \(field) in /proc/\(pid)/status")
    }

    /// Writes `bytes` (holding one request for each of `ids`) as fast as the pipe takes them while reading
    /// answers in the same poll loop; checks that every id comes back exactly once.
    /// State-change notifications in between are counted and skipped; the count is returned.
    @discardableResult
    func pipeline(_ bytes: [UInt8], ids: Range<Int64>) throws -> Int {
        let count = ids.count
        var notifications = 0
        var seen = [Bool](repeating: false, count: count)
        var received = 0
        var offset = 0
        while received < count {
            var descriptors: [pollfd] = [
                pollfd(fd: output, events: Int16(POLLIN), revents: 0),
                pollfd(fd: offset < bytes.count ? input : -1, events: Int16(POLLOUT), revents: 0),
            ]
            guard poll(&descriptors, 2, Self.timeoutMilliseconds) > 0 else {
                throw BenchError(description: "no progress in \(Self.timeoutMilliseconds) ms (\(received) of \(count) answers)")
            }
            if descriptors[1].revents != 0 { offset += try writeSome(bytes, from: offset) }
            if descriptors[0].revents != 0 {
                guard try readSome() else { throw BenchError(description: "the server closed stdout after \(received) answers") }
                while let id = try takeAnswer(skippingNotifications: &notifications) {
                    guard ids.contains(id), !seen[Int(id - ids.lowerBound)] else {
                        throw BenchError(description: "unexpected or repeated id \(id)")
                    }
                    seen[Int(id - ids.lowerBound)] = true
                    received += 1
                }
            }
        }
        return notifications
    }

    /// Closes stdin, reads to the end of stdout, reaps the server and returns its peak RSS in KiB.
    func finish() throws -> Int {
        close(input)
        input = -1
        while try readSome() {
            try wait(for: output, events: POLLIN)
        }
        guard inbox.count == inboxStart else {
            throw BenchError(description: "unexpected output: \(String(decoding: inbox[inboxStart...], as: UTF8.self))")
        }
        var status: Int32 = 0
        var usage = rusage()
        guard wait4(pid, &status, 0, &usage) == pid else { throw BenchError(description: "wait4: errno \(errno)") }
        guard status == 0 else { throw BenchError(description: "the server ended with status \(status)") }
        return usage.ru_maxrss
    }

    /// Reads everything the server's output holds now, without waiting for more.
    /// - Throws: when the server closed its output.
    func readEverythingAvailableNow() throws {
        var entry = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
        while poll(&entry, 1, 0) > 0 {
            guard try readSome() else { throw BenchError(description: "the server closed stdout") }
            entry.revents = 0
        }
    }

    /// Closes the server's input and waits for it to end, discarding whatever it still writes (a server
    /// that keeps notifying, as under a market simulation); returns its peak RSS in KiB.
    func finishDiscardingOutput() throws -> Int {
        close(input)
        input = -1
        while try readSome() {
            inboxStart = inbox.count
            try wait(for: output, events: POLLIN)
        }
        var status: Int32 = 0
        var usage = rusage()
        guard wait4(pid, &status, 0, &usage) == pid else { throw BenchError(description: "wait4: errno \(errno)") }
        guard status == 0 else { throw BenchError(description: "the server ended with status \(status)") }
        return usage.ru_maxrss
    }

    // MARK: Bytes

    private func writeSome(_ bytes: [UInt8], from offset: Int) throws -> Int {
        let written = bytes[offset...].withUnsafeBytes { Glibc.write(input, $0.baseAddress, $0.count) }
        if written >= 0 { return written }
        if errno == EAGAIN || errno == EINTR { return 0 }
        throw BenchError(description: "write: \(String(cString: strerror(errno)))")
    }

    /// Reads what is available; false at end of output.
    private func readSome() throws -> Bool {
        if inboxStart > 65_536 || (inboxStart > 0 && inboxStart == inbox.count) {
            inbox.removeSubrange(..<inboxStart)
            inboxStart = 0
        }
        let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
        if count > 0 {
            inbox.append(contentsOf: chunk[..<count])
            return true
        }
        if count == 0 { return false }
        if errno == EAGAIN || errno == EINTR { return true }
        throw BenchError(description: "read: \(String(cString: strerror(errno)))")
    }

    private func wait(for descriptor: Int32, events: Int32) throws {
        var entry = pollfd(fd: descriptor, events: Int16(events), revents: 0)
        guard poll(&entry, 1, Self.timeoutMilliseconds) > 0 else {
            throw BenchError(description: "the server did not answer within \(Self.timeoutMilliseconds) ms")
        }
    }

    /// Takes one framed answer off the inbox and returns its id, or nil when none is complete. An answer
    /// must be a success (`"result"`) with an integer id.
    private func takeAnswer() throws -> Int64? {
        var notifications = 0
        return try takeAnswer(skippingNotifications: &notifications)
    }

    /// Like ``takeAnswer()``, but skips (and counts) `viewModel/changed` notifications.
    private func takeAnswer(skippingNotifications notifications: inout Int) throws -> Int64? {
        var frame = try takeFrame()
        while let body = frame, find(Array(#""method":"viewModel/changed""#.utf8), from: body.lowerBound, to: body.upperBound) != nil {
            notifications += 1
            frame = try takeFrame()
        }
        guard let body = frame else { return nil }
        guard find(Array(#""result":"#.utf8), from: body.lowerBound, to: body.upperBound) != nil,
              let idStart = find(Array(#""id":"#.utf8), from: body.lowerBound, to: body.upperBound)
        else {
            throw BenchError(description: "unexpected answer: \(String(decoding: inbox[body], as: UTF8.self))")
        }
        let digits = inbox[(idStart + 5)..<body.upperBound].prefix { $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) }
        guard let id = Int64(String(decoding: digits, as: UTF8.self)) else {
            throw BenchError(description: "answer without an integer id: \(String(decoding: inbox[body], as: UTF8.self))")
        }
        return id
    }

    /// Takes one frame off the inbox and returns where its body is in the inbox (valid until the next
    /// read), or nil when none is complete.
    private func takeFrame() throws -> Range<Int>? {
        let body: Range<Int>
        switch framing {
        case .ndjson:
            guard let newline = inbox[inboxStart...].firstIndex(of: 0x0A) else { return nil }
            body = inboxStart..<newline
            inboxStart = newline + 1
        case .lsp:
            guard let headerEnd = find([0x0D, 0x0A, 0x0D, 0x0A], from: inboxStart) else { return nil }
            let header = String(decoding: inbox[inboxStart..<headerEnd], as: UTF8.self)
            guard header.hasPrefix("Content-Length: "), let length = Int(header.dropFirst(16)) else {
                throw BenchError(description: "not a Content-Length header: \(header)")
            }
            guard inbox.count >= headerEnd + 4 + length else { return nil }
            body = (headerEnd + 4)..<(headerEnd + 4 + length)
            inboxStart = body.upperBound
        }
        return body
    }

    /// Where `needle` first occurs in the inbox between `start` and `end`.
    private func find(_ needle: [UInt8], from start: Int, to end: Int? = nil) -> Int? {
        let end = end ?? inbox.count
        guard end - start >= needle.count else { return nil }
        for index in start...(end - needle.count) where inbox[index] == needle[0] {
            if inbox[index..<index + needle.count].elementsEqual(needle) { return index }
        }
        return nil
    }
}

/// Nanoseconds on the monotonic clock.
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// What the scheduler counted for a process's threads (``ServerChild/schedulerFigures()``).
struct SchedulerFigures {
    /// Time on a CPU, in nanoseconds.
    var onCPUNanoseconds: Int
    /// Context switches, voluntary and not.
    var contextSwitches: Int

    /// The time on a CPU in milliseconds per second and the switches per second, from `earlier` to these
    /// figures, `seconds` apart.
    func rates(since earlier: SchedulerFigures, seconds: Double) -> (onCPUMillisecondsPerSecond: Double, switchesPerSecond: Double) {
        (Double(onCPUNanoseconds - earlier.onCPUNanoseconds) / 1e6 / seconds, Double(contextSwitches - earlier.contextSwitches) / seconds)
    }
}
