import JSON
import Testing

/// Hostile params for ViewModels and their actions, in both framings: numbers out of range, wrong types
/// and shapes, unknown, closed and mistyped handles. Each is answered as the spec says and the `ping`
/// after it is served.
@MainActor
@Suite(.enabled(if: ServerProcess.executablePath != nil, ServerProcess.skipMessage))
struct HostileActionTests {
    /// One request of a case and what it must get.
    struct Step: Sendable {
        var id: String
        var request: String
        var answers: [Answer]
    }

    /// A case: requests sent one at a time, each answered before the next goes.
    struct Case: Sendable {
        var name: String
        var steps: [Step]
    }

    struct Trial: Sendable, CustomTestStringConvertible {
        var hostile: Case
        var wire: WireFraming
        var testDescription: String { "\(hostile.name) (\(wire))" }
    }

    /// The ViewModels every case starts with, opened in this order: their handles are v1 to v5.
    nonisolated static let setup = [
        #"{"type":"cart"}"#, #"{"type":"catalog"}"#, #"{"type":"productForm"}"#,
        #"{"type":"productDetail","args":{"productId":"p-0001"}}"#, #"{"type":"dashboard"}"#,
    ]

    /// A request with id `"x"` (or `id`) and params given as raw JSON text (so that numbers such as `1e300`
    /// stay as written); `nil` params are left out.
    nonisolated static func call(_ method: String, _ params: String?, id: String = "x") -> String {
        #"{"jsonrpc":"2.0","id":"\#(id)","method":"\#(method)"\#(params.map { #","params":\#($0)"# } ?? "")}"#
    }

    /// A one-request case.
    nonisolated static func one(_ name: String, _ method: String, _ params: String?, _ answer: Answer) -> Case {
        Case(name: name, steps: [Step(id: "x", request: call(method, params), answers: [answer])])
    }

    nonisolated static let x: JSONValue = "x"

    nonisolated static func add(_ quantity: String, product: String = #""p-0001""#) -> String {
        #"{"viewModel":"v1","productId":\#(product),"quantity":\#(quantity)}"#
    }

    /// Adds one p-0001 to the cart first (id "x1"), then sends `method` with `params`.
    nonisolated static func afterAddingOne(_ name: String, _ method: String, _ params: String, _ answer: Answer) -> Case {
        Case(name: name, steps: [
            Step(id: "x1", request: call("cart/add", add("1"), id: "x1"), answers: [.actionResult(id: "x1")]),
            Step(id: "x", request: call(method, params), answers: [answer]),
        ])
    }

    nonisolated static let quantities: [Case] = [
        one("cart/add quantity -1", "cart/add", add("-1"), .refused(id: x, reason: "invalidQuantity", details: ["quantity": "-1"])),
        one("cart/add quantity 0", "cart/add", add("0"), .refused(id: x, reason: "invalidQuantity", details: ["quantity": "0"])),
        one("cart/add quantity -2^63", "cart/add", add("-9223372036854775808"),
            .refused(id: x, reason: "invalidQuantity", details: ["quantity": "-9223372036854775808"])),
        one("cart/add quantity 2^63-1", "cart/add", add("9223372036854775807"), .refused(id: x, reason: "quantityExceedsStock")),
        afterAddingOne("cart/add quantity 2^63-1 to a line of 1", "cart/add", add("9223372036854775807"),
                       .refused(id: x, reason: "quantityExceedsStock")),
        one("cart/add quantity 2^63", "cart/add", add("9223372036854775808"), .invalidParams(id: x, parameter: "quantity")),
        one("cart/add quantity 1e300", "cart/add", add("1e300"), .invalidParams(id: x, parameter: "quantity")),
        one("cart/add quantity -1e300", "cart/add", add("-1e300"), .invalidParams(id: x, parameter: "quantity")),
        one("cart/add quantity 1.5", "cart/add", add("1.5"), .invalidParams(id: x, parameter: "quantity")),
        one("cart/add quantity as a string", "cart/add", add(#""2""#), .invalidParams(id: x, parameter: "quantity")),
        one("cart/add quantity null", "cart/add", add("null"), .invalidParams(id: x, parameter: "quantity")),
        one("cart/add quantity true", "cart/add", add("true"), .invalidParams(id: x, parameter: "quantity")),
        one("cart/add quantity as an array", "cart/add", add("[1]"), .invalidParams(id: x, parameter: "quantity")),
        one("cart/add without quantity", "cart/add", #"{"viewModel":"v1","productId":"p-0001"}"#, .invalidParams(id: x, parameter: "quantity")),
        one("cart/add productId as a number", "cart/add", add("1", product: "42"), .invalidParams(id: x, parameter: "productId")),
        one("cart/add an unknown product", "cart/add", add("1", product: #""nope""#), .refused(id: x, reason: "productNotFound")),
        one("cart/add an empty productId", "cart/add", add("1", product: #""""#), .refused(id: x, reason: "productNotFound")),
        one("cart/setQuantity -1", "cart/setQuantity", add("-1"), .refused(id: x, reason: "invalidQuantity", details: ["quantity": "-1"])),
        one("cart/setQuantity 0 for a product not in the cart", "cart/setQuantity", add("0"), .refused(id: x, reason: "notInCart")),
        afterAddingOne("cart/setQuantity 2^63-1", "cart/setQuantity", add("9223372036854775807"), .refused(id: x, reason: "quantityExceedsStock")),
        afterAddingOne("cart/setQuantity 1e300", "cart/setQuantity", add("1e300"), .invalidParams(id: x, parameter: "quantity")),
        afterAddingOne("cart/setQuantity 2^63", "cart/setQuantity", add("9223372036854775808"), .invalidParams(id: x, parameter: "quantity")),
        afterAddingOne("cart/setQuantity 0.5", "cart/setQuantity", add("0.5"), .invalidParams(id: x, parameter: "quantity")),
        one("cart/remove a product not in the cart", "cart/remove", #"{"viewModel":"v1","productId":"p-0001"}"#, .refused(id: x, reason: "notInCart")),
    ]

    /// Sets the form's price to `price`, then submits: refused, naming every invalid field.
    nonisolated static func price(_ name: String, _ price: String, _ message: String) -> Case {
        Case(name: name, steps: [
            Step(id: "x1", request: call("productForm/setField", #"{"viewModel":"v3","field":"price","value":\#(price)}"#, id: "x1"),
                 answers: [.actionResult(id: "x1")]),
            Step(id: "x", request: call("productForm/submit", #"{"viewModel":"v3"}"#), answers: [
                .refused(id: x, reason: "validationFailed", details: [
                    "name": "Name is required.", "category": "Category is required.", "price": .string(message),
                ]),
            ]),
        ])
    }

    nonisolated static let notANumber = "Price must be a number with at most two decimals, such as 12.50."
    nonisolated static let prices: [Case] = [
        price("a negative price", #""-1""#, "Price must be greater than zero."),
        price("a zero price", #""0.00""#, "Price must be greater than zero."),
        price("a price of 1e300", #""1e300""#, notANumber),
        price("a price of 2^63", #""9223372036854775808""#, notANumber),
        price("a price of 15 digits", #""999999999999999.99""#, "Price must be at most 1000000.00."),
        price("a price one cent over the maximum", #""1000000.01""#, "Price must be at most 1000000.00."),
        price("a price with three decimals", #""12.345""#, notANumber),
        price("a price of NaN", #""NaN""#, notANumber),
        price("a price in Arabic-Indic digits", #""١٢""#, notANumber),
        price("a blank price", #"" ""#, "Price is required."),
        one("a price as a number", "productForm/setField", #"{"viewModel":"v3","field":"price","value":12.5}"#, .invalidParams(id: x, parameter: "value")),
        one("setField of an unknown field", "productForm/setField", #"{"viewModel":"v3","field":"colour","value":"1"}"#,
            .invalidParams(id: x, parameter: "field")),
        one("setField without a value", "productForm/setField", #"{"viewModel":"v3","field":"name"}"#, .invalidParams(id: x, parameter: "value")),
        one("setField with a numeric field name", "productForm/setField", #"{"viewModel":"v3","field":1,"value":"x"}"#,
            .invalidParams(id: x, parameter: "field")),
    ]

    nonisolated static let others: [Case] = [
        one("catalog/setSort to an unknown sort", "catalog/setSort", #"{"viewModel":"v2","sort":"random"}"#, .invalidParams(id: x, parameter: "sort")),
        one("catalog/setSort to a number", "catalog/setSort", #"{"viewModel":"v2","sort":5}"#, .invalidParams(id: x, parameter: "sort")),
        one("catalog/setCategory to a number", "catalog/setCategory", #"{"viewModel":"v2","category":42}"#, .invalidParams(id: x, parameter: "category")),
        one("catalog/setCategory to an unknown category", "catalog/setCategory", #"{"viewModel":"v2","category":"nope"}"#,
            .refused(id: x, reason: "categoryNotFound")),
        one("catalog/search for a number", "catalog/search", #"{"viewModel":"v2","query":42}"#, .invalidParams(id: x, parameter: "query")),
        one("catalog/search with full-text query syntax", "catalog/search", #"{"viewModel":"v2","query":"\"NEAR(* OR name:x ^ (("}"#,
            .actionResult(id: x)),
        one("catalog/search for 100 KB", "catalog/search", #"{"viewModel":"v2","query":"\#(String(repeating: "ab ", count: 33_000))"}"#,
            .actionResult(id: x)),
        one("catalog/toggleSelection of an unknown product", "catalog/toggleSelection", #"{"viewModel":"v2","productId":"nope"}"#,
            .refused(id: x, reason: "notListed")),
        one("catalog/deleteSelected with nothing selected", "catalog/deleteSelected", #"{"viewModel":"v2"}"#, .refused(id: x, reason: "nothingSelected")),
        one("dashboard/reloadSection of an unknown section", "dashboard/reloadSection", #"{"viewModel":"v5","section":"ads"}"#,
            .invalidParams(id: x, parameter: "section")),
        one("dashboard/reloadSection of a number", "dashboard/reloadSection", #"{"viewModel":"v5","section":1}"#, .invalidParams(id: x, parameter: "section")),
    ]

    nonisolated static let handles: [Case] = [
        one("an action on an unknown handle", "cart/add", #"{"viewModel":"v999","productId":"p-0001","quantity":1}"#, .invalidParams(id: x, parameter: "viewModel")),
        one("an action on a numeric handle", "cart/add", #"{"viewModel":1,"productId":"p-0001","quantity":1}"#, .invalidParams(id: x, parameter: "viewModel")),
        one("an action without a handle", "cart/add", #"{"productId":"p-0001","quantity":1}"#, .invalidParams(id: x, parameter: "viewModel")),
        one("a cart action on a catalog handle", "cart/add", #"{"viewModel":"v2","productId":"p-0001","quantity":1}"#,
            .error(-32602, id: x, says: #""v2" is a catalog ViewModel, not a cart"#,
                   data: ["parameter": "viewModel", "reason": #""v2" is a catalog ViewModel, not a cart"#])),
        one("a catalog action on a cart handle", "catalog/refresh", #"{"viewModel":"v1"}"#, .invalidParams(id: x, parameter: "viewModel")),
        one("a dashboard action on a product detail handle", "dashboard/reload", #"{"viewModel":"v4"}"#, .invalidParams(id: x, parameter: "viewModel")),
        Case(name: "an action on a closed ViewModel", steps: [
            Step(id: "x1", request: call("viewModel/close", #"{"viewModel":"v1"}"#, id: "x1"), answers: [.result(id: "x1", nil)]),
            Step(id: "x", request: call("cart/add", add("1")), answers: [.invalidParams(id: x, parameter: "viewModel")]),
        ]),
        Case(name: "closing a ViewModel twice", steps: [
            Step(id: "x1", request: call("viewModel/close", #"{"viewModel":"v2"}"#, id: "x1"), answers: [.result(id: "x1", nil)]),
            Step(id: "x", request: call("viewModel/close", #"{"viewModel":"v2"}"#), answers: [.invalidParams(id: x, parameter: "viewModel")]),
        ]),
        Case(name: "getting a closed ViewModel", steps: [
            Step(id: "x1", request: call("viewModel/close", #"{"viewModel":"v5"}"#, id: "x1"), answers: [.result(id: "x1", nil)]),
            Step(id: "x", request: call("viewModel/get", #"{"viewModel":"v5"}"#), answers: [.invalidParams(id: x, parameter: "viewModel")]),
        ]),
        one("opening an unknown type", "viewModel/open", #"{"type":"checkout"}"#, .invalidParams(id: x, parameter: "type")),
        one("opening a numeric type", "viewModel/open", #"{"type":42}"#, .invalidParams(id: x, parameter: "type")),
        one("opening without params", "viewModel/open", nil, .invalidParams(id: x, parameter: "type")),
        one("opening with args as an array", "viewModel/open", #"{"type":"cart","args":[]}"#, .invalidParams(id: x, parameter: "args")),
        one("opening with args as a string", "viewModel/open", #"{"type":"cart","args":"x"}"#, .invalidParams(id: x, parameter: "args")),
        one("opening a product detail with a numeric productId", "viewModel/open", #"{"type":"productDetail","args":{"productId":42}}"#,
            .invalidParams(id: x, parameter: "args.productId")),
        one("opening a product detail without productId", "viewModel/open", #"{"type":"productDetail"}"#,
            .invalidParams(id: x, parameter: "args.productId")),
        one("opening a product detail of an unknown product", "viewModel/open", #"{"type":"productDetail","args":{"productId":"nope"}}"#,
            .actionResult(id: x)),
    ]

    nonisolated static let shapes: [Case] = [
        one("action params as an array", "cart/add", #"["v1","p-0001",1]"#, .invalidParams(id: x, parameter: "")),
        one("action params empty", "cart/add", "{}", .invalidParams(id: x, parameter: "viewModel")),
        one("action params absent", "cart/add", nil, .invalidParams(id: x, parameter: "viewModel")),
        one("viewModel/get params as an array", "viewModel/get", #"["v1"]"#, .invalidParams(id: x, parameter: "")),
        one("an unknown action", "cart/applyCoupon", #"{"viewModel":"v1"}"#,
            .error(-32601, id: x, says: "Method not found", data: ["method": "cart/applyCoupon"])),
    ]

    nonisolated static let cases = quantities + prices + others + handles + shapes

    /// Starts a server, initialises it and opens the ``setup`` ViewModels (v1 to v5).
    private func start(_ wire: WireFraming) throws -> ServerProcess {
        let server = try HostileSession.start(wire)
        for (index, params) in Self.setup.enumerated() {
            try server.send([Self.call("viewModel/open", params, id: "open\(index)")], framing: wire)
            let opened = try server.responses(through: .string("open\(index)"), framing: wire)
            #expect(opened.count == 1 && opened.last?["result"]?["viewModel"] == .string("v\(index + 1)"), "\(opened)")
        }
        return server
    }

    @Test(arguments: cases.flatMap { hostile in [WireFraming.ndjson, .lsp].map { Trial(hostile: hostile, wire: $0) } })
    func isAnsweredAndThePingAfterIsServed(_ trial: Trial) throws {
        let server = try start(trial.wire)
        for step in trial.hostile.steps {
            try server.send([step.request], framing: trial.wire)
            let responses = try server.responses(through: .string(step.id), framing: trial.wire)
            let problem = Answer.mismatch(responses, step.answers)
            #expect(problem == nil, "\(step.request.prefix(200)): \(problem ?? "")")
        }
        try HostileSession.expectAnswersThenPing(server, trial.wire, [])
    }

    /// The priciest product the form accepts, ten of it in a cart: totals and tax stay in range.
    @Test(arguments: [WireFraming.ndjson, .lsp])
    func theMostExpensiveProductTheFormAcceptsCanFillACart(_ wire: WireFraming) throws {
        let server = try start(wire)
        // The form needs its categories: ask until they have loaded (each answer is a round trip, no sleep;
        // the server's timeout, not a number of asks, decides when that has taken too long).
        var state: JSONValue?
        var attempt = 0
        let deadline = monotonicMilliseconds() + server.timeoutMilliseconds
        while state?["phase"] != "loaded", monotonicMilliseconds() < deadline {
            attempt += 1
            try server.send([Self.call("viewModel/get", #"{"viewModel":"v3"}"#, id: "get\(attempt)")], framing: wire)
            state = try server.responses(through: .string("get\(attempt)"), framing: wire).last?["result"]?["state"]
        }
        #expect(state?["phase"] == "loaded")
        for (field, value) in [("name", "Gold Kettle"), ("price", "1000000.00"), ("category", "home")] {
            try server.send([Self.call("productForm/setField", #"{"viewModel":"v3","field":"\#(field)","value":"\#(value)"}"#)], framing: wire)
            #expect(Answer.mismatch(try server.responses(through: Self.x, framing: wire), [.actionResult(id: Self.x)]) == nil)
        }
        try server.send([Self.call("productForm/submit", #"{"viewModel":"v3"}"#, id: "submit")], framing: wire)
        #expect(Answer.mismatch(try server.responses(through: "submit", framing: wire), [.actionResult(id: "submit")]) == nil)
        try server.send([Self.call("viewModel/get", #"{"viewModel":"v3"}"#, id: "created")], framing: wire)
        let product = try #require(try server.responses(through: "created", framing: wire).last?["result"]?["state"]?["createdProductId"]?.stringValue)
        try server.send([Self.call("cart/add", #"{"viewModel":"v1","productId":"\#(product)","quantity":10}"#, id: "add")], framing: wire)
        #expect(Answer.mismatch(try server.responses(through: "add", framing: wire), [.actionResult(id: "add")]) == nil)
        try server.send([Self.call("viewModel/get", #"{"viewModel":"v1"}"#, id: "cart")], framing: wire)
        let cart = try server.responses(through: "cart", framing: wire).last?["result"]?["state"]
        #expect(cart?["totals"]?["subtotal"] == "10000000.00", "\(cart.map { "\($0)" } ?? "no state")")
        #expect(cart?["totals"]?["tax"]?.stringValue?.isEmpty == false)
        try HostileSession.expectAnswersThenPing(server, wire, [])
    }
}
