import Credentials
import Testing

/// The one test at the real cost: it hashes and verifies once, and prints how long each took (no
/// assertion on time: machines differ).
@Suite struct StandardCostTests {
    @Test func theStandardCostHashesAndVerifies() throws {
        let hasher = PasswordHasher()
        let clock = ContinuousClock()
        var encoded = ""
        let hashing = try clock.measure { encoded = try hasher.hash("correct horse battery staple") }
        var verified = false
        let verifying = clock.measure { verified = hasher.verify("correct horse battery staple", against: encoded) }
        #expect(verified)
        #expect(encoded.hasPrefix("$argon2id$v=19$m=65536,t=2,p=1$"))
        #expect(!hasher.needsRehash(encoded))
        print("PasswordHasher at .standard (Argon2id, t=2, 64 MiB): hash \(hashing), verify \(verifying)")
    }
}
