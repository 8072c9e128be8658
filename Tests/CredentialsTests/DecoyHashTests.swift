import Testing
@testable import Credentials

@Suite struct DecoyHashTests {
    @Test func theBuiltInDecoyIsAnArgon2idHashAtTheStandardCost() {
        let hasher = PasswordHasher(cost: .standard)
        #expect(DecoyHashes.standard.hasPrefix("$argon2id$v=19$m=65536,t=2,p=1$"))
        #expect(!hasher.needsRehash(DecoyHashes.standard))  // same cost: verifying it costs what a real verify does
        #expect(!hasher.verify("", against: DecoyHashes.standard))
    }
}
