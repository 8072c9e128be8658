import Foundation
import GRDB
import JSON
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A fast stream must not flood a slow client: a `priceTicker` under `--simulate-market 1000` (on a
/// one-product catalog, so every change is the ticker's), read by a client that stops reading. Asserted
/// only what holds on every machine: the catch-up is bounded (the pipe, the outbox's high-water mark and
/// one state) however many changes were stored meanwhile, it is fewer notifications than changes, and the
/// mirror built from it equals `viewModel/get`.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct TickerFloodTests {
    /// The outbox's high-water mark (`Outbox.highWatermark`): past it, changes are held back.
    static let outboxHighWatermark = 1024 * 1024

    @Test func aClientThatStopsReadingATickerGetsABoundedCoalescedCatchUp() throws {
        let folder = try TemporaryDirectory()
        let database = folder.path + "/ticker.sqlite"
        let seed = try ServerProcess(command: [ServerProcess.executablePath!, "seed", "--products", "1", "--database", database])
        #expect(try seed.waitForExit() == 0)

        let server = try ServerProcess(
            ["--framing", "ndjson", "--database", database, "--simulate-market", "1000", "--simulate-seed", "9"], timeoutSeconds: 120)
        let client = MirroringClient(server)
        try client.initialize()
        let catalog = try client.open("catalog")
        try client.waitUntil(catalog) { $0["phase"] == "loaded" }
        let productId = try #require(client.mirrors[catalog]?.state["products"]?.arrayValue?.first?["id"])
        let ticker = try client.open("priceTicker", args: ["productId": productId])
        try client.waitUntil(ticker) { $0["phase"] == "loaded" }

        // Stop reading. Wait (reading nothing) until the output pipe is full, then until the simulation
        // has stored 3 000 more changes: conditions on the server's work, not on time.
        let capacity = server.outputPipeCapacity()
        let reader = try DatabaseQueue(path: database, configuration: { var c = Configuration(); c.readonly = true; return c }())
        let stored = { try reader.read { try Int64.fetchOne($0, sql: "SELECT MAX(seq) FROM price_point") ?? 0 } }
        try waitFor(server) { server.unreadOutputBytes() >= capacity / 2 }
        let changesBefore = try stored()
        try waitFor(server) { try stored() >= changesBefore + 3_000 }
        let changesDuringStall = try stored() - changesBefore

        // Read again: what was held back comes as a bounded, coalesced catch-up, then the answer.
        let notificationsBefore = client.notificationCount
        let bytesBefore = server.outputByteCount
        let truth = try client.get(ticker)
        let caughtUpBytes = server.outputByteCount - bytesBefore
        let caughtUp = client.notificationCount - notificationsBefore
        #expect(caughtUpBytes <= capacity + Self.outboxHighWatermark + 64 * 1024, "read \(caughtUpBytes) bytes after the stall")
        #expect(Int64(caughtUp) < changesDuringStall, "\(caughtUp) notifications for \(changesDuringStall) changes")
        let mirror = try #require(client.mirrors[ticker])
        #expect(mirror.version == truth.version)
        #expect(mirror.state == truth.state)
        #expect((server.statusKilobytes("VmHWM") ?? 0) < BackpressureTests.residentLimitKilobytes)
        _ = try server.killAndWait()
    }

    /// Polls `condition` every few milliseconds until it holds (failing after the server's timeout):
    /// waits for work to be done, never measures it.
    private func waitFor(_ server: ServerProcess, _ condition: () throws -> Bool) throws {
        let deadline = monotonicMilliseconds() + server.timeoutMilliseconds
        while try !condition() {
            guard monotonicMilliseconds() < deadline else {
                throw ServerProcessError(description: "the condition did not hold within \(server.timeoutMilliseconds) ms")
            }
            usleep(5_000)
        }
    }
}
