import Credentials
import Testing

@Suite struct SecureRandomTests {
    @Test func identifiersAreLowercaseHexOfTheRequestedLength() {
        let identifier = SecureRandom.identifier()
        #expect(identifier.count == 32)
        #expect(identifier.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(SecureRandom.identifier(bytes: 8).count == 16)
        #expect(SecureRandom.identifier(bytes: 1).count == 2)
        #expect(SecureRandom.identifier(bytes: 0) == "")
    }

    @Test func identifiersAreDistinct() {
        let identifiers = (0..<1_000).map { _ in SecureRandom.identifier() }
        #expect(Set(identifiers).count == 1_000)
    }

    @Test func bytesHaveTheRequestedCount() {
        #expect(SecureRandom.bytes(0).isEmpty)
        #expect(SecureRandom.bytes(32).count == 32)
        #expect(SecureRandom.bytes(32) != SecureRandom.bytes(32))
    }

    @Test func constantTimeEqualsComparesContentsAndLengths() {
        #expect(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEquals([9, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(!constantTimeEquals([], [0]))
        #expect(constantTimeEquals([], []))
    }
}
