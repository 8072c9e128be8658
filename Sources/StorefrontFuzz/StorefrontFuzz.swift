import FuzzHarness

#if canImport(Glibc)
import Glibc
#endif

// Two builds of one file. Built by scripts/fuzz.sh (-sanitize=fuzzer,address -DFUZZING), libFuzzer
// supplies `main` and calls `LLVMFuzzerTestOneInput` with each input it generates. Built normally (as by
// `swift build`), there is no libFuzzer: `main` below replays input files, e.g. a crash libFuzzer saved.

/// libFuzzer's entry point: one input through ``FuzzHarness``; a broken invariant aborts, which libFuzzer
/// reports as a crash and saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let report = MainActor.assumeIsolated { FuzzHarness().run(input) }
    if !report.passed {
        printError("storefront-fuzz: invariant broken\n\(report)")
        abort()
    }
    return 0
}

/// Writes `line` and a newline to stderr (stdout is left alone).
func printError(_ line: String) {
    let text = Array((line + "\n").utf8)
    var written = 0
    while written < text.count {
        let count = text[written...].withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        guard count > 0 else { return }
        written += count
    }
}

#if !FUZZING
/// `storefront-fuzz [--print-output] FILE...`: runs each file through the harness and prints what it
/// found (and with `--print-output`, what the server wrote) to stderr. Exits 1 when any file breaks an
/// invariant.
@main
enum ReplayCommand {
    static func main() {
        var paths = Array(CommandLine.arguments.dropFirst())
        let printsOutput = paths.first == "--print-output"
        if printsOutput { paths.removeFirst() }
        guard !paths.isEmpty else {
            printError("usage: storefront-fuzz [--print-output] FILE...   (replays inputs; scripts/fuzz.sh builds the fuzzer)")
            exit(2)
        }
        var failed = false
        for path in paths {
            guard let input = readFile(path) else {
                printError("\(path): cannot read")
                failed = true
                continue
            }
            let report = MainActor.assumeIsolated { FuzzHarness().run(input) }
            if printsOutput { printError(String(decoding: report.output, as: UTF8.self)) }
            printError("\(path): \(report.passed ? "ok" : "FAILED"): \(report)")
            failed = failed || !report.passed
        }
        exit(failed ? 1 : 0)
    }

    private static func readFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count > 0 { bytes.append(contentsOf: buffer[..<count]) }
            if count < buffer.count { return ferror(file) == 0 ? bytes : nil }
        }
    }
}
#endif
