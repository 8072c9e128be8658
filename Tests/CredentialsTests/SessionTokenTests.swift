import Credentials
import Testing

@Suite struct SessionTokenTests {
    /// 32 bytes 0x00...0x1f, base64url-encoded.
    let knownToken = "sft_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"

    @Test func generatedTokensAreDistinctAndWellFormed() {
        let tokens = (0..<100).map { _ in SessionToken.generate() }
        #expect(Set(tokens).count == 100)
        #expect(Set(tokens.map(\.value)).count == 100)
        for token in tokens {
            #expect(token.value.hasPrefix("sft_"))
            #expect(token.value.utf8.count == 47)
        }
    }

    @Test func parsingAGeneratedTokenGivesItBack() throws {
        for _ in 0..<100 {
            let token = SessionToken.generate()
            let parsed = try #require(SessionToken(parsing: token.value))
            #expect(parsed == token)
            #expect(parsed.value == token.value)
            #expect(parsed.digest == token.digest)
        }
        #expect(SessionToken(parsing: knownToken)?.value == knownToken)
    }

    @Test func parsingRefusesAnythingButTheExactFormat() {
        let body = String(knownToken.dropFirst(4))
        let body42 = String(body.dropLast())
        let token46 = String(knownToken.dropLast())
        let refused: [String] = [
            "",
            "sft_",
            body,  // no prefix
            "sfx_" + body,
            "SFT_" + body,
            "sft-" + body,
            "sft_" + body42,  // 42 characters
            knownToken + "A",  // 44
            "sft_" + body42 + "+",  // base64, not base64url
            "sft_" + body42 + "/",
            "sft_" + String(body.dropLast(2)) + "==",  // padding
            " " + token46,  // whitespace, same length
            token46 + "\n",
            token46 + "\t",
            "sft_" + String(body.prefix(21)) + " " + String(body.suffix(21)),
            knownToken + "\n",
            " " + knownToken,
            token46 + "\u{1}",  // a control character
            token46 + "\0",
            String(knownToken.dropLast(2)) + "é",  // two UTF-8 bytes, so 47 bytes in all
            "sft_" + body42 + "9",  // stray bits in the last character: not what generate() writes
            "sft_" + String(repeating: "A", count: 10_000),
            String(repeating: "\u{1}", count: 10_000),
        ]
        for string in refused {
            #expect(SessionToken(parsing: string) == nil, "\(string.prefix(60).debugDescription)")
        }
    }

    @Test func theDigestIsTheLowercaseHexSHA256OfTheTokenString() throws {
        let token = try #require(SessionToken(parsing: knownToken))
        // printf '%s' 'sft_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8' | sha256sum
        #expect(token.digest == "2ce4c2bb5abb595fb5104f82029429c38bc8ad7c5a0742e872851daba96b00f3")
    }

    @Test func digestsAre64LowercaseHexCharactersAndDifferPerToken() {
        let tokens = (0..<100).map { _ in SessionToken.generate() }
        for token in tokens {
            #expect(token.digest.count == 64)
            #expect(token.digest.allSatisfy { $0.isHexDigit && !$0.isUppercase })
            #expect(token.digest == token.digest)
        }
        #expect(Set(tokens.map(\.digest)).count == 100)
    }

    @Test func printingATokenNeverShowsIt() throws {
        let token = try #require(SessionToken(parsing: knownToken))
        let secret = String(knownToken.dropFirst(4))
        var dumped = ""
        dump(token, to: &dumped)
        var dumpedInArray = ""
        dump([token], to: &dumpedInArray)
        let printed = [
            "\(token)", String(describing: token), String(reflecting: token), "\([token])", "\(Optional(token) as Any)",
            "\(["session": token])", dumped, dumpedInArray,
        ]
        for text in printed {
            #expect(!text.contains(secret), "\(text)")
            #expect(!text.contains(secret.prefix(8)), "\(text)")
        }
        #expect("\(token)" == "SessionToken(sft_…redacted)")
        #expect(String(reflecting: token) == "SessionToken(sft_…redacted)")
    }
}
