import CSodium

/// A session token: what a front end keeps to resume its session in a new server process.
///
/// `sft_` followed by 32 random bytes in base64url without padding, 47 characters in all, e.g.
/// `sft_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8`. Give `value` to the client once; store only
/// `digest`, so that a leaked database holds no usable token. To resume, parse what the client sends with
/// `init(parsing:)` and look its `digest` up.
///
/// Printing a token (`description`, `debugDescription`, `dump`) shows `SessionToken(sft_…redacted)`, so a
/// token logged by accident leaks nothing; use `value` where the token itself is meant.
public struct SessionToken: Sendable, Hashable {
    /// The token's prefix: `sft_` (StoreFront Token), which makes a leaked token recognizable to secret
    /// scanners and to people.
    public static let prefix = "sft_"
    /// The number of random bytes in a token: 32 (256 bits).
    static let randomByteCount = 32
    /// The length of those bytes in base64url without padding: 43.
    static let encodedByteCount = 43

    /// The token as the client holds it: `sft_` and 43 base64url characters.
    public let value: String

    private init(value: String) {
        self.value = value
    }

    /// A new token of 32 bytes from libsodium's random generator (randombytes_buf), encoded with
    /// sodium_bin2base64 (base64url, no padding).
    public static func generate() -> SessionToken {
        Sodium.ensureInitialized()
        var bytes = SecureRandom.bytes(randomByteCount)
        defer { sodium_memzero(&bytes, bytes.count) }
        var encoded = [CChar](repeating: 0, count: cs_base64_urlsafe_no_padding_encoded_len(bytes.count))
        sodium_bin2base64(&encoded, encoded.count, bytes, bytes.count, cs_base64_variant_urlsafe_no_padding())
        return SessionToken(value: prefix + encoded.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
    }

    /// A token read from a client, or nil unless `string` is exactly what `generate()` makes: `sft_`, then
    /// 43 characters of the base64url alphabet (`A-Z a-z 0-9 - _`) that decode (sodium_base642bin) to 32
    /// bytes with no stray bits in the last character.
    ///
    /// The length is checked first, so an over-long or garbage string is refused without reading it.
    ///
    /// - Parameter string: the token as the client sent it.
    public init?(parsing string: String) {
        let utf8 = string.utf8
        guard utf8.count == Self.prefix.utf8.count + Self.encodedByteCount, utf8.starts(with: Self.prefix.utf8) else {
            return nil
        }
        let encoded = utf8.dropFirst(Self.prefix.utf8.count)
        guard encoded.allSatisfy(Self.isBase64URL) else { return nil }
        guard Self.decodesToRandomBytes(Array(encoded)) else { return nil }
        self.init(value: string)
    }

    /// The lowercase hex SHA-256 (crypto_hash_sha256) of `value`'s UTF-8 bytes, 64 characters: what the
    /// database stores and looks sessions up by, instead of the token.
    ///
    /// A plain hash is enough (no salt, no Argon2): the token is 256 random bits, so there is nothing to
    /// guess from its digest.
    public var digest: String {
        Sodium.ensureInitialized()
        let bytes = Array(value.utf8)
        var digest = [UInt8](repeating: 0, count: cs_hash_sha256_bytes())
        crypto_hash_sha256(&digest, bytes, UInt64(bytes.count))
        return SecureRandom.hex(digest)
    }

    /// Whether `byte` is in the base64url alphabet (RFC 4648 section 5).
    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }

    /// Whether `encoded` (base64url characters) decodes to exactly `randomByteCount` bytes with
    /// sodium_base642bin, which refuses a last character whose unused low bits are not zero (so each token
    /// has one spelling).
    private static func decodesToRandomBytes(_ encoded: [UInt8]) -> Bool {
        var bytes = [UInt8](repeating: 0, count: randomByteCount)
        defer { sodium_memzero(&bytes, bytes.count) }
        var decodedCount = 0
        let status = encoded.withUnsafeBufferPointer { encoded in
            encoded.withMemoryRebound(to: CChar.self) { encoded in
                sodium_base642bin(
                    &bytes, bytes.count, encoded.baseAddress, encoded.count, nil, &decodedCount, nil,
                    cs_base64_variant_urlsafe_no_padding()
                )
            }
        }
        return status == 0 && decodedCount == randomByteCount
    }
}

extension SessionToken: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `SessionToken(sft_…redacted)`: never the token.
    public var description: String {
        "SessionToken(\(Self.prefix)…redacted)"
    }

    /// `SessionToken(sft_…redacted)`: never the token.
    public var debugDescription: String {
        description
    }

    /// A mirror without children, so that `dump` and reflection do not show `value` either.
    public var customMirror: Mirror {
        Mirror(self, children: [], displayStyle: .struct)
    }
}
