import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A folder under `/tmp`, removed with everything in it when released.
final class TemporaryFolder {
    let path: String

    init() throws {
        var template = Array("/tmp/storefront-bench-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError(description: "mkdtemp: errno \(errno)") }
        path = String(cString: made)
    }

    deinit {
        try? runToCompletion(["/bin/rm", "-rf", path])
    }
}

/// A copy of a database file next to it, for measurements that write; removed (with its WAL files) when
/// released.
final class TemporaryDatabase {
    let path: String
    /// Copies made by this process so far: each copy has a name of its own (the server's copy and the raw
    /// floor's were one file, so the floor's writes went to the server's database between its adds).
    private static let made = Mutex(0)

    init(copying original: String) throws {
        let number = Self.made.withLock { made in
            made += 1
            return made
        }
        path = original + ".run-\(getpid())-\(number).sqlite"
        guard let source = fopen(original, "rb") else { throw BenchError(description: "cannot read \(original)") }
        defer { fclose(source) }
        guard let target = fopen(path, "wb") else { throw BenchError(description: "cannot write \(path)") }
        defer { fclose(target) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = fread(&buffer, 1, buffer.count, source)
            if count == 0 { break }
            guard fwrite(buffer, 1, count, target) == count else { throw BenchError(description: "cannot write \(path)") }
        }
        // On disk before anything is measured: the first checkpoint of a write-ahead log syncs the database
        // file, and that sync would otherwise write the whole copy (56 MB at 100 000 products) inside
        // whichever measurement reached it first (issue 16, round 11: the durable floor, once a schema with
        // fewer pages per commit moved its first checkpoint out of the untimed writes).
        guard fflush(target) == 0, fsync(fileno(target)) == 0 else { throw BenchError(description: "cannot sync \(path)") }
    }

    deinit {
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
    }
}

/// Starts `arguments` (the first one an executable path) with `actions` applied to its descriptors (nil:
/// the same stdio): the one way the benchmark starts a process.
/// - Returns: the child's pid.
func spawn(_ arguments: [String], actions: UnsafePointer<posix_spawn_file_actions_t>? = nil) throws -> pid_t {
    let argv = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var child: pid_t = 0
    let status = posix_spawn(&child, arguments[0], actions, nil, argv, environ)
    guard status == 0 else { throw BenchError(description: "cannot start \(arguments[0]): \(String(cString: strerror(status)))") }
    return child
}

/// Runs `arguments` (the first one an executable path) with the same stdio and waits for it; a non-zero
/// exit throws.
/// - Parameter withoutInput: give it `/dev/null` as stdin (a server then ends at once, as at the end of its
///   input).
func runToCompletion(_ arguments: [String], withoutInput: Bool = false) throws {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if withoutInput { posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0) }
    let child = try spawn(arguments, actions: &actions)
    var exit: Int32 = 0
    while waitpid(child, &exit, 0) < 0 && errno == EINTR {}
    guard exit == 0 else { throw BenchError(description: "\(arguments.joined(separator: " ")) ended with status \(exit)") }
}

/// Writes `text` to stderr (stdout carries the table).
func printToStandardError(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}
