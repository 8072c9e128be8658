import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy from a port of its own on 127.0.0.1 to a target port there, run as a Python 3 process (one
/// thread per direction of each connection). ``freeze()`` stops the process (SIGSTOP): its connections stay
/// open and nothing flows through them, as when a cable is cut between a server and its database (no reset,
/// no close, only silence; new connections are still accepted by the kernel into the backlog and then hang).
/// ``thaw()`` lets everything flow again. The proxy ends when its stdin closes (this object's release, or
/// the test process's death) and is killed in `deinit`.
final class FreezableProxy {
    /// The proxy's source, run with `python3 -c SOURCE TARGET_PORT`; prints the port it listens on.
    static let source = """
        import os, socket, sys, threading
        target = int(sys.argv[1])
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        print(listener.getsockname()[1], flush=True)

        def pump(source, destination):
            try:
                while True:
                    data = source.recv(65536)
                    if not data:
                        break
                    destination.sendall(data)
            except OSError:
                pass
            for end in (source, destination):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        def accept():
            while True:
                client, _ = listener.accept()
                try:
                    upstream = socket.create_connection(("127.0.0.1", target))
                except OSError:
                    client.close()
                    continue
                for ends in ((client, upstream), (upstream, client)):
                    threading.Thread(target=pump, args=ends, daemon=True).start()

        threading.Thread(target=accept, daemon=True).start()
        sys.stdin.read()
        os._exit(0)
        """

    private let process: Process
    private let input: Pipe
    /// The port it listens on.
    let port: Int

    /// Starts a proxy to `targetPort` on 127.0.0.1.
    init(to targetPort: Int) throws {
        process = Process()
        // The python3 on the PATH, as scripts/postgres.sh uses it.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.source, String(targetPort)]
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // The first line is the port (or nothing, when Python failed: its error went to the test's stderr).
        var line: [UInt8] = []
        while !line.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(contentsOf: chunk)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw ServerProcessError(description: "the proxy did not start: it printed \(String(decoding: line, as: UTF8.self).debugDescription)")
        }
        self.port = port
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Stops the proxy's process (SIGSTOP): nothing flows through it until ``thaw()``.
    func freeze() {
        kill(process.processIdentifier, SIGSTOP)
    }

    /// Lets the proxy run again (SIGCONT): what waited in its sockets flows on.
    func thaw() {
        kill(process.processIdentifier, SIGCONT)
    }
}
