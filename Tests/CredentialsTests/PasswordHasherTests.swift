import Credentials
import Testing

/// The hasher at `.minimum` cost, so that these tests run in microseconds; `StandardCostTests` checks the
/// real cost once.
@Suite struct PasswordHasherTests {
    let hasher = PasswordHasher(cost: .minimum)

    @Test func aPasswordVerifiesAgainstItsOwnHash() throws {
        let encoded = try hasher.hash("correct horse battery staple")
        #expect(hasher.verify("correct horse battery staple", against: encoded))
    }

    @Test func aWrongPasswordDoesNotVerify() throws {
        let encoded = try hasher.hash("correct horse battery staple")
        #expect(!hasher.verify("correct horse battery stapler", against: encoded))
        #expect(!hasher.verify("Correct horse battery staple", against: encoded))
        #expect(!hasher.verify("", against: encoded))
    }

    @Test func twoHashesOfOnePasswordDifferBecauseOfTheirSalts() throws {
        let first = try hasher.hash("hunter2")
        let second = try hasher.hash("hunter2")
        #expect(first != second)
        #expect(hasher.verify("hunter2", against: first))
        #expect(hasher.verify("hunter2", against: second))
    }

    @Test func theEncodingNamesArgon2idAndTheCost() throws {
        let encoded = try hasher.hash("hunter2")
        let cost = PasswordHasher.Cost.minimum
        #expect(cost == PasswordHasher.Cost(operations: 1, memoryBytes: 8 * 1024))
        #expect(encoded.hasPrefix("$argon2id$v=19$m=\(cost.memoryBytes / 1024),t=\(cost.operations),p=1$"))
        #expect(encoded.hasPrefix("$argon2id$v=19$m=8,t=1,p=1$"))
    }

    @Test func theStandardCostIsArgon2idWithTwoPassesOver64MiB() {
        #expect(PasswordHasher.Cost.standard == PasswordHasher.Cost(operations: 2, memoryBytes: 64 * 1024 * 1024))
        #expect(PasswordHasher().cost == .standard)
    }

    @Test func malformedEncodingsVerifyFalseWithoutTrapping() throws {
        let encoded = try hasher.hash("hunter2")
        let malformed = [
            "",
            "hunter2",
            "$argon2id$",
            "$argon2id$v=19$m=8,t=1,p=1$",
            String(encoded.dropLast(10)),
            String(encoded.prefix(encoded.count / 2)),
            encoded + "\0",
            encoded + "\0trailing",
            encoded + String(repeating: "A", count: 200),
            encoded.replacing("$argon2id$", with: "$argon2x$", maxReplacements: 1),
            encoded.replacing("m=8,", with: "m=banana,", maxReplacements: 1),
            encoded.replacing("t=1,", with: "t=0,", maxReplacements: 1),
            "$argon2i$v=19$m=8,t=1,p=1$",
            "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW",
            String(repeating: "$", count: 127),
        ]
        for candidate in malformed {
            #expect(!hasher.verify("hunter2", against: candidate), "\(candidate.debugDescription)")
            #expect(hasher.needsRehash(candidate), "\(candidate.debugDescription)")
        }
        // One more base64 character is still a well-formed Argon2id encoding (of a 33-byte digest): it does not
        // verify, and needsRehash, which reads only the parameters, finds them equal to this hasher's.
        #expect(!hasher.verify("hunter2", against: encoded + "A"))
        #expect(!hasher.needsRehash(encoded + "A"))
    }

    @Test func aHashOfAnotherCostNeedsRehashingAndOneOfThisCostDoesNot() throws {
        let encoded = try hasher.hash("hunter2")
        #expect(!hasher.needsRehash(encoded))
        let morePasses = PasswordHasher(cost: .init(operations: 2, memoryBytes: PasswordHasher.Cost.minimum.memoryBytes))
        let moreMemory = PasswordHasher(cost: .init(operations: 1, memoryBytes: 16 * 1024))
        #expect(morePasses.needsRehash(encoded))
        #expect(moreMemory.needsRehash(encoded))
        // A hash of another cost still verifies: the cost is read from the hash.
        #expect(morePasses.verify("hunter2", against: encoded))
    }

    @Test func hashRefusesAnEmptyPassword() {
        #expect(throws: CredentialsError.emptyPassword) { try hasher.hash("") }
    }

    @Test func hashRefusesPasswordsLongerThan1024UTF8Bytes() throws {
        let longest = String(repeating: "a", count: PasswordHasher.maximumPasswordBytes)
        #expect(hasher.verify(longest, against: try hasher.hash(longest)))
        #expect(throws: CredentialsError.passwordTooLong) { try hasher.hash(longest + "a") }
        // Bytes, not characters: 513 "é" are 1026 bytes.
        #expect(throws: CredentialsError.passwordTooLong) { try hasher.hash(String(repeating: "é", count: 513)) }
        // verify refuses what hash refuses, without hashing.
        #expect(!hasher.verify(longest + "a", against: try hasher.hash(longest)))
    }

    @Test func passwordsAreHashedAsTheirExactUTF8Bytes() throws {
        let withNUL = try hasher.hash("a\0b")
        #expect(hasher.verify("a\0b", against: withNUL))
        #expect(!hasher.verify("a", against: withNUL))
        // No Unicode normalization: precomposed and decomposed "é" are different passwords.
        let precomposed = try hasher.hash("caf\u{E9}")
        #expect(!hasher.verify("cafe\u{301}", against: precomposed))
    }

    @Test func verifyingWithoutAnAccountReturnsForAnyPassword() {
        hasher.verifyWithoutAccount("hunter2")
        hasher.verifyWithoutAccount("hunter2")
        hasher.verifyWithoutAccount("")
        hasher.verifyWithoutAccount(String(repeating: "a", count: 2_000))
    }

    @Test func anErrorDescribesItselfWithoutThePassword() {
        #expect("\(CredentialsError.passwordTooLong)" == "passwordTooLong: the password is longer than 1024 UTF-8 bytes")
        #expect(CredentialsError.emptyPassword.code == .emptyPassword)
    }
}
