import Randomness
import JSON
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A client that stops reading while the server produces a stream of state changes: the server stays
/// small, and the client, reading again, converges on the true state from the patches alone.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct BackpressureTests {
    /// The most the server may ever have resident, in kB.
    static let residentLimitKilobytes = 64 * 1024

    @Test(arguments: ["patch", "snapshot"])
    func aClientThatStopsReadingKeepsTheServerSmallAndCatchesUp(stateUpdates: String) throws {
        let server = try ServerProcess(["--framing", "ndjson", "--database", ":memory:"], timeoutSeconds: 120)
        let client = MirroringClient(server)
        try client.initialize(stateUpdates: stateUpdates)
        let catalog = try client.open("catalog")
        let dashboard = try client.open("dashboard")
        // Every cart follows the cart service: one change, a notification from each.
        let carts = try (0..<8).map { _ in try client.open("cart") }
        let cart = carts[0]
        try client.waitUntil(catalog) { $0["phase"] == "loaded" }
        for cart in carts { try client.waitUntil(cart) { $0["phase"] == "loaded" } }
        // A long list makes every re-sort a large patch.
        for _ in 0..<6 { _ = try client.result("catalog/loadMore", ["viewModel": .string(catalog)]) }
        let startKilobytes = server.statusKilobytes("VmHWM") ?? 0

        // Many state-changing actions, pipelined, written while the client reads nothing.
        var random = SeededRandom(seed: 0xBAC4_9E55)
        let sorts: [JSONValue] = ["name", "price", "newest"]
        let count = environmentInteger("STOREFRONT_BACKPRESSURE_REQUESTS", default: 4_000)
        let requests = (0..<count).map { _ -> (id: Int64, text: String) in
            let productId = JSONValue.string("p-\(String(Int.random(in: 1...40, using: &random)).leftPadded(to: 4))")
            switch Int.random(in: 0..<20, using: &random) {
            case 0...3: return client.request("catalog/setSort", ["viewModel": .string(catalog), "sort": sorts.randomElement(using: &random)!])
            case 4: return client.request("catalog/selectAll", ["viewModel": .string(catalog)])
            case 5: return client.request("catalog/clearSelection", ["viewModel": .string(catalog)])
            case 6: return client.request("viewModel/get", ["viewModel": .string(catalog)])
            case 7...12: return client.request("cart/add", ["viewModel": .string(cart), "productId": productId, "quantity": 1])
            case 13...16: return client.request("cart/remove", ["viewModel": .string(cart), "productId": productId])
            case 17: return client.request("dashboard/reloadSection", ["viewModel": .string(dashboard), "section": "featured"])
            default: return client.request("catalog/toggleSelection", ["viewModel": .string(catalog), "productId": productId])
            }
        }
        let bytes = requests.flatMap { client.framing.frame($0.text) }
        let outputBefore = server.outputByteCount

        // Write while the server takes the requests, reading nothing. Whether it stops reading before it
        // has taken them all is not the test's business: by its rule it stops only while 4 MiB of output
        // wait or 4096 requests are in flight, and how much output waits depends on how many changes were
        // coalesced into one notification while the client was not reading (scheduling) and on pipe sizes.
        let written = try Self.writeWithoutReading(bytes, to: server)
        let takenWithoutReading = written - server.unreadInputBytes()
        let holdingKilobytes = server.statusKilobytes("VmHWM") ?? 0

        // Read again, writing the rest as the server takes it, until every request has its answer.
        let ids = Set(requests.map(\.id))
        var answers: [Int64: Int] = [:]
        var errorCodes: [JSONValue: Int] = [:]
        try client.exchange(bytes, from: written, each: { message in
            guard let id = message["id"]?.integerValue else { return }
            _ = client.takeResponse(id)
            try #require(ids.contains(id), "an answer to a request nobody sent: \(message)")
            answers[id, default: 0] += 1
            if let code = message["error"]?["code"] { errorCodes[code, default: 0] += 1 }
        }, until: { answers.count == ids.count })
        for handle in [catalog, dashboard] + carts {
            let truth = try client.get(handle)
            let mirror = try #require(client.mirrors[handle])
            #expect(mirror.version == truth.version, "\(handle)")
            #expect(mirror.state == truth.state, "\(handle): the mirror built from the notifications is the true state")
        }
        let peakKilobytes = server.statusKilobytes("VmHWM") ?? 0
        let outputBytes = server.outputByteCount - outputBefore
        // Nothing more comes for these requests: each was answered exactly once.
        server.closeInput()
        let late = try server.receiveToEnd(framing: client.framing).compactMap { $0["id"]?.integerValue }.filter(ids.contains)
        #expect(late.isEmpty, "answered again after all were answered: \(late.prefix(10))")
        #expect(answers.values.allSatisfy { $0 == 1 }, "answered more than once: \(answers.filter { $0.value > 1 }.keys.sorted().prefix(10))")
        #expect(Set(errorCodes.keys).isSubset(of: [-32001]), "an action succeeds or is refused: \(errorCodes)")
        print("""
            backpressure (\(stateUpdates)): \(count) requests, \(bytes.count) bytes, \(takenWithoutReading) of them taken while the \
            client read nothing; \(client.notificationCount) notifications, \(outputBytes) bytes of output; errors \(errorCodes); \
            VmHWM \(startKilobytes) kB before, \(holdingKilobytes) kB when the client read again, \(peakKilobytes) kB peak
            """)
        #expect(peakKilobytes < Self.residentLimitKilobytes, "peak resident set \(peakKilobytes) kB")
        #expect(try server.waitForExit() == 0)
    }

    /// Writes `bytes` to the server while it takes them, reading nothing, and returns how many were
    /// written: all of them, or as many as fit once the server has stopped taking input and stopped
    /// working (its CPU time stands still while its input is full). That moment only decides when this
    /// client reads again; no verdict depends on it.
    static func writeWithoutReading(_ bytes: [UInt8], to server: ServerProcess) throws -> Int {
        var written = 0
        let deadline = monotonicMilliseconds() + server.timeoutMilliseconds
        while written < bytes.count {
            written += try server.writeWithoutBlocking(bytes[written...])
            var ticks = cpuTicks(server.pid)
            while written < bytes.count, !server.waitForRoomInInput(milliseconds: 1_000) {
                let now = cpuTicks(server.pid)
                if now == ticks || monotonicMilliseconds() > deadline { return written }
                ticks = now
            }
        }
        return written
    }

    @Test func manyLargeAnswersInOneReadDoNotPileUp() throws {
        let server = try ServerProcess(["--framing", "ndjson", "--database", ":memory:"], timeoutSeconds: 120)
        let client = MirroringClient(server)
        try client.initialize()
        let catalog = try client.open("catalog")
        try client.waitUntil(catalog) { $0["phase"] == "loaded" }
        for _ in 0..<11 { _ = try client.result("catalog/loadMore", ["viewModel": .string(catalog)]) }
        let stateBytes = try client.get(catalog).state.description.utf8.count
        // Small requests with large answers, as many as fit in one read; the ping after them is answered
        // after every one of them. Written as the server takes them (with pipes smaller than the requests,
        // a client that wrote them all before reading would wait for a server waiting for it).
        let gets = (0..<600).map { _ in client.request("viewModel/get", ["viewModel": .string(catalog)]) }
        let ping = client.request("ping")
        let ids = Set(gets.map(\.id))
        let bytes = gets.flatMap { client.framing.frame($0.text) } + client.framing.frame(ping.text)
        var peakKilobytes = 0
        var answered = 0
        try client.exchange(bytes, each: { message in
            peakKilobytes = max(peakKilobytes, server.statusKilobytes("VmHWM") ?? 0)
            if let id = message["id"]?.integerValue, ids.contains(id), client.takeResponse(id)?["result"] != nil { answered += 1 }
        }, until: { client.takeResponse(ping.id) != nil })
        peakKilobytes = max(peakKilobytes, server.statusKilobytes("VmHWM") ?? 0)
        #expect(answered == gets.count)
        print("backpressure: 600 viewModel/get of a \(stateBytes)-byte state pipelined; VmHWM \(peakKilobytes) kB")
        #expect(peakKilobytes < Self.residentLimitKilobytes, "peak resident set \(peakKilobytes) kB")
    }

    @Test func aClientThatNeverReadsAndClosesStdinLetsTheServerExit() throws {
        let server = try ServerProcess(["--framing", "ndjson", "--database", ":memory:"], timeoutSeconds: 60)
        let client = MirroringClient(server)
        try client.initialize()
        let catalog = try client.open("catalog")
        try client.waitUntil(catalog) { $0["phase"] == "loaded" }
        for _ in 0..<11 { _ = try client.result("catalog/loadMore", ["viewModel": .string(catalog)]) }
        let stateBytes = try client.get(catalog).state.serialized().count
        // From here on the client reads nothing. Each answer carries the whole state, so by its rule (it
        // reads only while less than 4 MiB of output wait) the server takes only the requests whose answers
        // fit in 4 MiB and the output pipe, plus one more read (64 KiB), however large the pipes are.
        let texts = (0..<4_000).map { _ in client.request("viewModel/get", ["viewModel": .string(catalog)]).text }
        let bytes = texts.flatMap { client.framing.frame($0) }
        let requestBytes = texts.map { client.framing.frame($0).count }.max() ?? 0
        let answersThatFit = (4 * 1024 * 1024 + server.outputPipeCapacity()) / stateBytes + 1
        let mostTaken = (answersThatFit + 1) * requestBytes + 64 * 1024
        try #require(mostTaken < bytes.count, "the requests are more than the server may take")
        let written = try Self.writeWithoutReading(bytes, to: server)
        let taken = written - server.unreadInputBytes()
        #expect(taken <= mostTaken, "the server took \(taken) bytes of requests while \(mostTaken) were all it could answer")
        server.closeInput()
        let peakKilobytes = server.statusKilobytes("VmHWM") ?? 0
        // Nobody reads: the server gives up on its pending output after its drain deadline and exits.
        #expect(try server.waitForExitWithoutReading() == 0, "stderr: \(server.errorText)")
        print("backpressure: a client that never reads: \(taken) of \(bytes.count) bytes taken (at most \(mostTaken)), then stdin closed; VmHWM \(peakKilobytes) kB; the server exited")
        #expect(peakKilobytes < Self.residentLimitKilobytes)
    }

    /// User plus system CPU time of `pid`, in clock ticks (fields 14 and 15 of /proc/<pid>/stat).
    static func cpuTicks(_ pid: pid_t) -> Int {
        let descriptor = open("/proc/\(pid)/stat", O_RDONLY)
        guard descriptor >= 0 else { return -1 }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return -1 }
        let text = String(decoding: buffer[..<count], as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return -1 }
        // After "pid (comm)": state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
