import Randomness
/// How one fuzz input is cut into reads, and after which reads the client waits for every answer.
///
/// Chunk lengths are drawn from a generator seeded by a hash of the input, so the same input always
/// arrives the same way, while different inputs arrive in pieces of every size (one byte, a few bytes,
/// whole messages, all at once). After about one read in four the client waits until nothing is left to
/// happen, as a client that waits for its answers does; after the others the next read arrives as soon as
/// the tasks it started have reached their first suspension, so requests overlap.
///
/// An input that starts with the line `#!lines` (not sent) is read one line per read, waiting after each:
/// the way to write a regression input that needs earlier answers in place (a product created before it
/// is added to the cart).
///
/// The decoder must not care how its input is cut (``FuzzHarness`` checks that separately); the cut
/// matters to dispatch, because each read is one main-actor turn, as in `StdioTransport`.
public struct ChunkPlan: Sendable, Equatable {
    /// The bytes of a leading `#!lines` line, which are not sent.
    public let headerLength: Int
    /// The lengths of the successive chunks after the header; they add up to the rest of the input.
    public let lengths: [Int]
    /// For each chunk, whether the client waits for every answer after it.
    public let waits: [Bool]

    /// The line that asks for one read per line.
    public static let linesDirective = Array("#!lines\n".utf8)

    /// The plan for `input`.
    public init(for input: [UInt8]) {
        if input.starts(with: Self.linesDirective) {
            headerLength = Self.linesDirective.count
            var lengths: [Int] = []
            var start = headerLength
            for index in input.indices.dropFirst(headerLength) where input[index] == 0x0A || index == input.count - 1 {
                lengths.append(index + 1 - start)
                start = index + 1
            }
            self.lengths = lengths
            waits = Array(repeating: true, count: lengths.count)
            return
        }
        headerLength = 0
        var generator = SeededRandom(seed: Self.hash(input))
        var lengths: [Int] = []
        var waits: [Bool] = []
        var remaining = input.count
        // One input in eight arrives whole, as a client writing everything before the server reads.
        let whole = generator.next() % 8 == 0
        while remaining > 0 {
            let length: Int
            if whole {
                length = remaining
            } else {
                switch generator.next() % 4 {
                case 0: length = 1
                case 1: length = 1 + Int(generator.next() % 8)
                case 2: length = 1 + Int(generator.next() % 64)
                default: length = 1 + Int(generator.next() % 1024)
                }
            }
            let taken = min(length, remaining)
            lengths.append(taken)
            waits.append(generator.next() % 4 == 0)
            remaining -= taken
        }
        self.lengths = lengths
        self.waits = waits
    }

    /// What the client sends: the input without its header.
    public func body(of input: [UInt8]) -> ArraySlice<UInt8> {
        input[headerLength...]
    }

    /// The chunks of `input` (after the header) as slices.
    public func chunks(of input: [UInt8]) -> [ArraySlice<UInt8>] {
        var start = headerLength
        return lengths.map { length in
            defer { start += length }
            return input[start..<start + length]
        }
    }

    /// FNV-1a, 64 bits.
    private static func hash(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}

