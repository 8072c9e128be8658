/// How one fuzz input is cut into reads: chunk lengths drawn from a generator seeded by a hash of the
/// input, so the same input always arrives the same way, while different inputs arrive in pieces of
/// every size (one byte, a few bytes, whole messages, all at once).
///
/// The decoder must not care how its input is cut (``FuzzHarness`` checks that separately); the cut
/// matters to dispatch, because each read is one main-actor turn, and tasks started in one turn run
/// before the next read, as in `StdioTransport`.
public struct ChunkPlan: Sendable, Equatable {
    /// The lengths of the successive chunks; they add up to the input's length.
    public let lengths: [Int]

    /// The plan for `input`.
    public init(for input: [UInt8]) {
        var generator = SplitMix64(seed: Self.hash(input))
        var lengths: [Int] = []
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
            remaining -= taken
        }
        self.lengths = lengths
    }

    /// The chunks of `input` as slices.
    public func chunks(of input: [UInt8]) -> [ArraySlice<UInt8>] {
        var start = 0
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

/// A deterministic random source (SplitMix64).
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
