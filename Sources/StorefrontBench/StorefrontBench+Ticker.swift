import JSON

#if canImport(Glibc)
import Glibc
#endif

extension StorefrontBench {
    /// A `priceTicker` under `serve --simulate-market <rate>` on a one-product catalog (every change is the
    /// ticker's), read by a fast client (reads as output arrives) and by a slow one (reads every
    /// `slowReadSeconds`): notifications and bytes per second received, the largest notification, the most
    /// read in one go, the server's CPU (simulating, storing and notifying) and peak RSS; the mirror must
    /// equal `viewModel/get` at the end.
    func ticker(_ path: String) throws -> [Measurement] {
        let folder = try TemporaryFolder()
        return try [("tickerFast", 0.0), ("tickerSlow", slowReadSeconds)].map { name, pause in
            let database = folder.path + "/\(name).sqlite"
            try runToCompletion([path, "seed", "--products", "1", "--database", database])
            return try tickerRun(path, name: name, database: database, pauseSeconds: pause)
        }
    }

    private func tickerRun(_ path: String, name: String, database: String, pauseSeconds: Double) throws -> Measurement {
        let child = try ServerChild(
            path: path, framing: .ndjson,
            arguments: ["--database", database, "--simulate-market", String(tickerRate), "--simulate-seed", "1"])
        let session = BenchSession(child)
        let capabilities = try session.initialize()["capabilities"]
        guard capabilities?["simulation"]?["market"]?["rate"] == .integer(Int64(tickerRate)) else {
            throw BenchError(description: "initialize did not announce the simulation: \(capabilities ?? .null)")
        }
        let (catalog, _) = try session.open("catalog")
        _ = try session.waitUntil(catalog) { $0["phase"] == "loaded" }
        guard let productId = session.mirrors[catalog]?["products"]?.arrayValue?.first?["id"] else {
            throw BenchError(description: "the one-product catalog lists no product")
        }
        _ = try session.call("viewModel/close", ["viewModel": .string(catalog)])
        let (ticker, _) = try session.open("priceTicker", ["productId": productId])
        _ = try session.waitUntil(ticker) { $0["phase"] == "loaded" }

        var notifications = 0
        var bytes = 0
        var largest = 0
        var mostAtOnce = 0
        let ticksBefore = try child.cpuTicks()
        let start = monotonicNanoseconds()
        let end = start + UInt64(tickerSeconds * 1e9)
        func count(_ change: BenchSession.Change?) {
            guard let change else { return }
            notifications += 1
            bytes += change.bodyBytes
            largest = max(largest, change.bodyBytes)
        }
        if pauseSeconds == 0 {
            try BenchSession.pump([session], until: { monotonicNanoseconds() >= end }) { _, _, change in count(change) }
        } else {
            while monotonicNanoseconds() < end {
                var pause = timespec(tv_sec: Int(pauseSeconds), tv_nsec: Int((pauseSeconds - Double(Int(pauseSeconds))) * 1e9))
                nanosleep(&pause, nil)
                try child.readEverythingAvailableNow()
                var atOnce = 0
                while let (_, change) = try session.takeBuffered() {
                    count(change)
                    if change != nil { atOnce += 1 }
                }
                mostAtOnce = max(mostAtOnce, atOnce)
            }
        }
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        let cpuPercent = Double(try child.cpuTicks() - ticksBefore) / Double(sysconf(Int32(_SC_CLK_TCK))) / seconds * 100
        // The mirror (patches applied) equals the server's state once the answer to a get is read.
        let current = try session.call("viewModel/get", ["viewModel": .string(ticker)]).result
        let matches = current["state"] == session.mirrors[ticker]
        let history = session.mirrors[ticker]?["priceHistory"]?.arrayValue ?? []
        let peak = try child.memoryKiB("VmHWM")
        _ = try child.finishDiscardingOutput()
        guard matches else { throw BenchError(description: "\(name): the mirror differs from viewModel/get") }
        if verbose { printToStandardError("\(name): \(history.count) history points; last \(history.last ?? .null)\n") }
        var figures: [(key: String, value: Double, unit: String)] = [
            ("notificationsPerSecond", Double(notifications) / seconds, "/s"),
            ("kilobytesPerSecond", Double(bytes) / seconds / 1024, "KiB/s"),
            ("largestBytes", Double(largest), "B"),
            ("serverCPU", cpuPercent, "%"),
        ]
        if pauseSeconds > 0 { figures.append(("mostPerRead", Double(mostAtOnce), "")) }
        return Measurement(name: name, framing: .ndjson, runs: 1, count: notifications, figures: figures, peakRSSKiB: peak)
    }
}
