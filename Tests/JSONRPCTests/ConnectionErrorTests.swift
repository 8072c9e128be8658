import JSON
import JSONRPC
import Testing

@MainActor @Suite struct ConnectionErrorTests {
    struct AddToCartParams: Decodable {
        struct Options: Decodable { var giftWrap: Bool }
        var productID: String
        var quantity: Int
        var options: Options?
    }

    struct Boom: Error {}

    struct OutOfStock: RPCErrorConvertible {
        var rpcError: RPCError { RPCError(code: RPCErrorCode(rawValue: 4001), message: "Out of stock", data: ["productID": "p1"]) }
    }

    @Test func answersUnparsableJSONWithAParseErrorAndANullID() async throws {
        for text in ["{", #"{"jsonrpc":"2.0","id":1,"method":"ping""#, "nul", "{\"a\":1}}", ""] {
            let answer = try #require(await ConnectionHarness().answer(to: text), "\(text)")
            #expect(errorCode(of: answer) == -32700, "\(text)")
            #expect(answer["id"] == .null && answer["jsonrpc"] == "2.0")
            #expect(answer["error"]?["message"]?.stringValue?.hasPrefix("Parse error: ") == true)
        }
    }

    @Test func answersInvalidRequestsWithTheirIDWhenItCanBeRead() async throws {
        let cases: [(String, JSONValue)] = [
            (#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, 1),
            (#"{"id":1,"method":"ping"}"#, 1),
            (#"{"jsonrpc":2.0,"id":1,"method":"ping"}"#, 1),
            (#"{"jsonrpc":"2.0","id":2,"method":"ping","params":3}"#, 2),
            (#"{"jsonrpc":"2.0","id":2,"method":"ping","params":"x"}"#, 2),
            (#"{"jsonrpc":"2.0","id":"s","method":"ping","params":true}"#, "s"),
            (#"{"jsonrpc":"2.0","id":3}"#, 3),
            (#"{"jsonrpc":"2.0","id":4,"method":7}"#, 4),
            (#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, nil),
            (#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, nil),
            (#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, nil),
            (#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#, nil),
            (#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, nil),
            (#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#, nil),
            ("42", nil), (#""ping""#, nil), ("null", nil), ("true", nil), ("[]", nil),
        ]
        for (text, id) in cases {
            let answer = try #require(await ConnectionHarness().answer(to: text), "\(text)")
            #expect(errorCode(of: answer) == -32600, "\(text)")
            #expect(answer["id"] == id, "\(text)")
            #expect(answer["error"]?["message"]?.stringValue?.hasPrefix("Invalid Request: ") == true, "\(text)")
        }
    }

    @Test func takesNullParamsAsNoParams() async {
        // As Emacs's jsonrpc.el and pygls send them for a method without params.
        let answer = await ConnectionHarness().answer(to: #"{"jsonrpc":"2.0","id":2,"method":"ping","params":null}"#)
        #expect(answer == ["jsonrpc": "2.0", "id": 2, "result": [:]])
    }

    @Test func answersANotificationSentAsARequestSayingItIsANotification() async throws {
        let answer = try #require(await ConnectionHarness().answer(to: #"{"jsonrpc":"2.0","id":6,"method":"$/cancelRequest","params":{"id":1}}"#))
        #expect(errorCode(of: answer) == -32601)
        #expect(answer["error"]?["data"] == ["method": "$/cancelRequest", "kind": "notification"])
        #expect(answer["error"]?["message"]?.stringValue?.contains("is a notification; send it without an id") == true)
    }

    @Test func answersAnUnknownMethodWithItsName() async {
        let answer = await ConnectionHarness().answer(to: #"{"jsonrpc":"2.0","id":5,"method":"cart.nope"}"#)
        #expect(answer == [
            "jsonrpc": "2.0", "id": 5,
            "error": ["code": -32601, "message": "Method not found: cart.nope", "data": ["method": "cart.nope"]],
        ])
    }

    @Test func namesTheParameterThatDoesNotDecode() async throws {
        let harness = ConnectionHarness()
        harness.connection.register(MethodDescription(name: "cart.add", summary: "Adds.", result: nil), handler: .immediate { request in
            let params = try request.decodeParams(AddToCartParams.self)
            return .integer(Int64(params.quantity))
        })
        let cases: [(String, String)] = [
            (#"{"productID":"p1","quantity":"two"}"#, "quantity"),
            (#"{"quantity":1}"#, "productID"),
            (#"{"productID":"p1","quantity":1,"options":{"giftWrap":3}}"#, "options.giftWrap"),
            (#"{"productID":"p1","quantity":1,"options":{}}"#, "options.giftWrap"),
            ("[1,2]", ""),
        ]
        for (params, parameter) in cases {
            let answer = try #require(await harness.answer(to: #"{"jsonrpc":"2.0","id":6,"method":"cart.add","params":\#(params)}"#))
            #expect(errorCode(of: answer) == -32602, "\(params)")
            #expect(answer["id"] == 6)
            #expect(answer["error"]?["data"]?["parameter"] == .string(parameter), "\(params): \(answer)")
            #expect(answer["error"]?["data"]?["reason"]?.stringValue != nil)
        }
        let missing = await harness.answer(to: #"{"jsonrpc":"2.0","id":7,"method":"cart.add","params":{"quantity":1}}"#)
        #expect(missing?["error"] == [
            "code": -32602, "message": #"Invalid params: "productID" is required"#,
            "data": ["parameter": "productID", "reason": "is required"],
        ])
        let fine = await harness.answer(to: #"{"jsonrpc":"2.0","id":8,"method":"cart.add","params":{"productID":"p1","quantity":3}}"#)
        #expect(fine == result(3, id: 8))
    }

    @Test func answersAHandlerFailureWithAnInternalError() async throws {
        let harness = ConnectionHarness()
        harness.connection.register(MethodDescription(name: "boom", summary: "Fails.", result: nil), handler: .immediate { _ in throw Boom() })
        harness.connection.register(MethodDescription(name: "boom.later", summary: "Fails later.", result: nil), handler: .task { _ in
            await Task.yield()
            throw Boom()
        })
        for method in ["boom", "boom.later"] {
            let answer = try #require(await harness.answer(to: #"{"jsonrpc":"2.0","id":"b","method":"\#(method)"}"#))
            #expect(errorCode(of: answer) == -32603, "\(method)")
            #expect(answer["id"] == "b")
            #expect(answer["error"]?["message"]?.stringValue?.contains("Boom") == true)
        }
    }

    @Test func answersWithTheErrorAHandlerChose() async {
        let harness = ConnectionHarness()
        harness.connection.register(MethodDescription(name: "cart.checkout", summary: "Pays.", result: nil), handler: .task { _ in throw OutOfStock() })
        let answer = await harness.answer(to: #"{"jsonrpc":"2.0","id":9,"method":"cart.checkout"}"#)
        #expect(answer == ["jsonrpc": "2.0", "id": 9, "error": ["code": 4001, "message": "Out of stock", "data": ["productID": "p1"]]])
    }

    @Test func answersFramingErrorsWithANullID() {
        struct CutShort: RPCErrorConvertible {
            var rpcError: RPCError { .parseError("the input ended inside a message") }
        }
        let harness = ConnectionHarness()
        harness.connection.receive(framingError: CutShort())
        harness.connection.receive(framingError: RPCError.invalidRequest("message exceeds the limit of 100 bytes and was skipped"))
        let answers = harness.takeOutput()
        #expect(answers == [
            ["jsonrpc": "2.0", "id": .null, "error": ["code": -32700, "message": "Parse error: the input ended inside a message"]],
            ["jsonrpc": "2.0", "id": .null, "error": ["code": -32600, "message": "Invalid Request: message exceeds the limit of 100 bytes and was skipped"]],
        ])
    }
}
