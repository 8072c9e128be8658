import JSON
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// How messages are framed on the wire, as the test client writes and reads them.
enum WireFraming: String, Sendable {
    case ndjson
    case lsp

    /// `body` framed this way.
    func frame(_ body: String) -> [UInt8] {
        switch self {
        case .ndjson: Array((body + "\n").utf8)
        case .lsp: Array("Content-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
        }
    }
}

/// Why talking to the server failed.
struct ServerProcessError: Error, CustomStringConvertible {
    var description: String
}

/// The built `storefront serve`, started over three pipes. Its output is read with a deadline so that
/// a server that does not answer fails the test instead of hanging it.
///
/// Created on the main actor, so that no other server is spawned between `pipe()` and `fcntl()`.
@MainActor
final class ServerProcess {
    /// The `storefront` executable: next to the test bundle, else in the package's `.build/debug`.
    nonisolated static let executablePath: String? = {
        var directories: [String] = []
        var link = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &link, link.count - 1)
        if length > 0 {
            directories.append(directory(of: String(decoding: link[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        if let first = CommandLine.arguments.first { directories.append(directory(of: first)) }
        // <root>/Tests/EndToEndTests/ServerProcess.swift
        let root = directory(of: directory(of: directory(of: #filePath)))
        directories.append(root + "/.build/debug")
        return directories.map { $0 + "/storefront" }.first { access($0, X_OK) == 0 }
    }()

    nonisolated static let skipMessage: Comment = "the storefront executable is not built (looked next to the test bundle and in .build/debug)"

    private nonisolated static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[..<slash])
    }

    let pid: pid_t
    private(set) var input: Int32
    private var output: Int32
    private var errors: Int32
    private var outputBytes: [UInt8] = []
    /// Bytes read from the server's stdout so far.
    private(set) var outputByteCount = 0
    private(set) var errorBytes: [UInt8] = []
    private var exitStatus: Int32?
    /// How long any one wait may take before the test fails: a guard against a server that hangs, never
    /// a measure of speed, so it is generous (a loaded two-core machine starts and answers slowly).
    let timeoutMilliseconds: Int64

    /// Starts `storefront serve` with `arguments` (on a private in-memory database unless they name one,
    /// so that tests never touch the user's default database).
    convenience init(_ arguments: [String], timeoutSeconds: Int64 = 60) throws {
        guard let path = Self.executablePath else { throw ServerProcessError(description: "\(Self.skipMessage)") }
        let database = arguments.contains("--database") ? [] : ["--database", ":memory:"]
        try self.init(command: [path, "serve"] + database + arguments, timeoutSeconds: timeoutSeconds)
    }

    /// Starts `command` (an executable's path, then its arguments) over the three pipes, e.g. a shell
    /// that starts the server, to test what happens when that intermediate process dies.
    ///
    /// With `thread`, the process is started from that thread, as a client that spawns from a worker
    /// thread does.
    init(command: [String], timeoutSeconds: Int64 = 60, spawningOn thread: WorkerThread? = nil) throws {
        let path = command[0]
        signal(SIGPIPE, SIG_IGN)
        timeoutMilliseconds = timeoutSeconds * 1000
        var stdinPipe: [Int32] = [0, 0], stdoutPipe: [Int32] = [0, 0], stderrPipe: [Int32] = [0, 0]
        // Close-on-exec, so that a server started by another test does not hold these pipes open (servers
        // are only started on the main actor, so none can be spawned between pipe() and fcntl()).
        guard pipe(&stdinPipe) == 0, pipe(&stdoutPipe) == 0, pipe(&stderrPipe) == 0 else {
            throw ServerProcessError(description: "pipe failed: errno \(errno)")
        }
        for descriptor in stdinPipe + stdoutPipe + stderrPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], STDOUT_FILENO)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], STDERR_FILENO)
        let argv = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        var status: Int32 = 0
        let spawn = { status = posix_spawn(&child, path, &actions, nil, argv, environ) }
        if let thread { thread.run(spawn) } else { spawn() }
        close(stdinPipe[0])
        close(stdoutPipe[1])
        close(stderrPipe[1])
        guard status == 0 else {
            [stdinPipe[1], stdoutPipe[0], stderrPipe[0]].forEach { close($0) }
            throw ServerProcessError(description: "posix_spawn \(path) failed: \(status)")
        }
        pid = child
        input = stdinPipe[1]
        output = stdoutPipe[0]
        errors = stderrPipe[0]
    }

    isolated deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        for descriptor in [input, output, errors] where descriptor >= 0 { close(descriptor) }
    }

    // MARK: Writing

    /// Writes all of `bytes` to the server's stdin.
    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(input, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw ServerProcessError(description: "write to the server failed: errno \(errno)")
            }
            offset += written
        }
    }

    /// Writes each message framed `framing`, in one write.
    func send(_ bodies: [String], framing: WireFraming) throws {
        try write(bodies.flatMap { framing.frame($0) })
    }

    /// Closes the server's stdin (end of input).
    func closeInput() {
        close(input)
        input = -1
    }

    // MARK: Reading

    /// The next message on stdout, framed `framing`.
    func receive(framing: WireFraming) throws -> JSONValue {
        let deadline = now() + timeoutMilliseconds
        while true {
            if let message = try takeMessage(framing: framing) { return message }
            guard output >= 0 else {
                throw ServerProcessError(description: "stdout ended; left: \(String(decoding: outputBytes, as: UTF8.self).debugDescription)")
            }
            try pump(until: deadline)
        }
    }

    /// The next `count` messages.
    func receive(_ count: Int, framing: WireFraming) throws -> [JSONValue] {
        try (0..<count).map { _ in try receive(framing: framing) }
    }

    /// Every message up to the end of stdout; bytes that are not a whole message fail the test.
    func receiveToEnd(framing: WireFraming) throws -> [JSONValue] {
        let deadline = now() + timeoutMilliseconds
        while output >= 0 { try pump(until: deadline) }
        var messages: [JSONValue] = []
        while let message = try takeMessage(framing: framing) { messages.append(message) }
        guard outputBytes.isEmpty else {
            throw ServerProcessError(description: "stdout ended inside a message: \(String(decoding: outputBytes, as: UTF8.self).debugDescription)")
        }
        return messages
    }

    /// Everything the server writes to stdout until it closes it, as text.
    func outputText() throws -> String {
        let deadline = now() + timeoutMilliseconds
        while output >= 0 { try pump(until: deadline) }
        defer { outputBytes = [] }
        return String(decoding: outputBytes, as: UTF8.self)
    }

    /// Waits for the server to exit (reading its output meanwhile) and returns its exit code.
    func waitForExit() throws -> Int32 {
        let deadline = now() + timeoutMilliseconds
        while output >= 0 || errors >= 0 { try pump(until: deadline) }
        return try reap(until: deadline)
    }

    /// Waits for the server to exit without reading its stdout (a client that never reads) and
    /// returns its exit code.
    func waitForExitWithoutReading() throws -> Int32 {
        try reap(until: now() + timeoutMilliseconds)
    }

    /// Waits for the process to end, until `deadline`, and returns its exit code.
    private func reap(until deadline: Int64) throws -> Int32 {
        while exitStatus == nil {
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                // WIFEXITED / WEXITSTATUS, which Swift does not import.
                exitStatus = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
            } else if result < 0 && errno != EINTR {
                throw ServerProcessError(description: "waitpid failed: errno \(errno)")
            } else if now() >= deadline {
                throw ServerProcessError(description: "the server did not exit within \(timeoutMilliseconds) ms")
            } else {
                poll(nil, 0, 1)  // Its descriptors are closed (or not read); it is exiting.
            }
        }
        return exitStatus!
    }

    /// What the server wrote to stderr so far.
    var errorText: String { String(decoding: errorBytes, as: UTF8.self) }

    /// Reads whatever stdout and stderr have, waiting until something comes or `deadline` passes.
    private func pump(until deadline: Int64) throws {
        var descriptors = [pollfd(fd: output, events: Int16(POLLIN), revents: 0), pollfd(fd: errors, events: Int16(POLLIN), revents: 0)]
        let remaining = deadline - now()
        guard remaining > 0 else {
            throw ServerProcessError(description: "no answer within \(timeoutMilliseconds) ms; stderr: \(errorText)")
        }
        let ready = poll(&descriptors, 2, Int32(remaining))
        if ready < 0 && errno != EINTR { throw ServerProcessError(description: "poll failed: errno \(errno)") }
        if descriptors[0].revents != 0 { readOutput() }
        if descriptors[1].revents != 0 { readAvailable(from: &errors, into: &errorBytes) }
    }

    private func readOutput() {
        let before = outputBytes.count
        readAvailable(from: &output, into: &outputBytes)
        outputByteCount += outputBytes.count - before
    }

    private func readAvailable(from descriptor: inout Int32, into bytes: inout [UInt8]) {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            bytes.append(contentsOf: chunk[..<count])
        } else if count == 0 || errno != EINTR {
            close(descriptor)
            descriptor = -1
        }
    }

    /// Takes one whole message off the front of the stdout bytes, or returns nil if none is complete.
    /// Anything that is not exactly a frame of `framing` around one JSON value throws.
    private func takeMessage(framing: WireFraming) throws -> JSONValue? {
        let body: ArraySlice<UInt8>
        switch framing {
        case .ndjson:
            guard let newline = outputBytes.firstIndex(of: 0x0A) else { return nil }
            body = outputBytes[..<newline]
            defer { outputBytes.removeSubrange(...newline) }
            return try parse(body)
        case .lsp:
            let prefix = Array("Content-Length: ".utf8)
            guard outputBytes.count >= prefix.count else {
                guard outputBytes.elementsEqual(prefix.prefix(outputBytes.count)) else { throw unexpectedOutput() }
                return nil
            }
            guard outputBytes.starts(with: prefix) else { throw unexpectedOutput() }
            var index = prefix.count
            var length = 0
            while index < outputBytes.count, (0x30...0x39).contains(outputBytes[index]) {
                length = length * 10 + Int(outputBytes[index] - 0x30)
                index += 1
            }
            guard outputBytes.count >= index + 4 else { return nil }
            guard index > prefix.count, outputBytes[index..<index + 4].elementsEqual("\r\n\r\n".utf8) else { throw unexpectedOutput() }
            guard outputBytes.count >= index + 4 + length else { return nil }
            body = outputBytes[(index + 4)..<(index + 4 + length)]
            defer { outputBytes.removeSubrange(..<(index + 4 + length)) }
            return try parse(body)
        }
    }

    private func parse(_ body: ArraySlice<UInt8>) throws -> JSONValue {
        do {
            return try JSONValue(parsing: Array(body))
        } catch {
            throw ServerProcessError(description: "stdout carried bytes that are not JSON: \(String(decoding: body, as: UTF8.self).debugDescription)")
        }
    }

    private func unexpectedOutput() -> ServerProcessError {
        ServerProcessError(description: "stdout carried bytes that are not a Content-Length frame: \(String(decoding: outputBytes.prefix(200), as: UTF8.self).debugDescription)")
    }

    // MARK: Faults and resources

    /// Sends `signal` to the process.
    func sendSignal(_ signal: Int32) {
        kill(pid, signal)
    }

    /// Kills the process with SIGKILL and waits for it to end; returns its status (137).
    func killAndWait() throws -> Int32 {
        if exitStatus == nil { kill(pid, SIGKILL) }
        return try waitForExit()
    }

    /// A figure in kB from `/proc/<pid>/status`, e.g. `VmHWM` (the peak resident set) or `VmRSS`;
    /// nil when the process is gone.
    func statusKilobytes(_ field: String) -> Int? {
        let descriptor = open("/proc/\(pid)/status", O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.dropFirst(field.count + 1).filter(\.isNumber))
        }
        return nil
    }

    /// Writes as much of `bytes` as the server's stdin takes now, without blocking; returns how many.
    func writeWithoutBlocking(_ bytes: ArraySlice<UInt8>) throws -> Int {
        let flags = fcntl(input, F_GETFL)
        _ = fcntl(input, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(input, F_SETFL, flags) }
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(input, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN { break }
                throw ServerProcessError(description: "write to the server failed: errno \(errno)")
            }
            offset += written
        }
        return offset - bytes.startIndex
    }

    /// Bytes the server wrote to its stdout that this side has not read yet (FIONREAD on the pipe).
    func unreadOutputBytes() -> Int {
        var count: Int32 = 0
        guard output >= 0, ioctl(output, UInt(FIONREAD), &count) == 0 else { return 0 }
        return Int(count)
    }

    /// Bytes written to the server's stdin that it has not read yet (FIONREAD on the pipe).
    func unreadInputBytes() -> Int {
        var count: Int32 = 0
        guard input >= 0, ioctl(input, UInt(FIONREAD), &count) == 0 else { return 0 }
        return Int(count)
    }

    /// How many bytes the pipe to the server's stdout holds (F_GETPIPE_SZ): what the server can write
    /// while the client reads nothing. Where that cannot be asked, 1 MiB (the most an unprivileged
    /// process may give a pipe by default).
    func outputPipeCapacity() -> Int {
        let capacity = fcntl(output, 1032 /* F_GETPIPE_SZ */)
        return capacity > 0 ? Int(capacity) : 1 << 20
    }

    /// Waits up to `milliseconds` for room in the server's stdin; returns whether there is some.
    func waitForRoomInInput(milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: input, events: Int16(POLLOUT), revents: 0)
        return poll(&descriptor, 1, milliseconds) > 0 && descriptor.revents & Int16(POLLOUT) != 0
    }

    /// Waits up to `milliseconds` for output, reads what came, and returns the whole messages received
    /// so far (none when nothing came; the client may then write or wait again).
    func receiveAvailable(framing: WireFraming, waitingMilliseconds milliseconds: Int32) throws -> [JSONValue] {
        var messages: [JSONValue] = []
        while let message = try takeMessage(framing: framing) { messages.append(message) }
        guard messages.isEmpty, output >= 0 else { return messages }
        var descriptors = [pollfd(fd: output, events: Int16(POLLIN), revents: 0), pollfd(fd: errors, events: Int16(POLLIN), revents: 0)]
        if poll(&descriptors, 2, milliseconds) > 0 {
            if descriptors[0].revents != 0 { readOutput() }
            if descriptors[1].revents != 0 { readAvailable(from: &errors, into: &errorBytes) }
        }
        while let message = try takeMessage(framing: framing) { messages.append(message) }
        return messages
    }

    /// Whether the server's stdout is still open (it closes when the server exits).
    var isOutputOpen: Bool { output >= 0 }

    private func now() -> Int64 { monotonicMilliseconds() }
}

/// Milliseconds on the monotonic clock.
func monotonicMilliseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
}
