import JSON

/// The keyed cart writes a fault test sent (one-unit `cart/add`s and `cart/checkout`s, each with an
/// idempotency key of its own) and how each was answered, checked against what the database holds.
///
/// The key is recorded in the transaction of its write, so the stored keys say exactly which writes took
/// effect, whatever their answers were (a write whose answer was a timeout may still have committed, and
/// one in flight at a kill may or may not have): every write answered with success must have its key
/// stored (its order too, for a checkout), every order must be the outcome of a stored checkout key, and
/// each product's units in the orders and the cart must be exactly the units its stored `add` keys added.
struct KeyedWriteLedger {
    /// What a write does.
    enum Kind: Equatable {
        /// Adds one unit of the product.
        case add(productId: String)
        case checkout
    }

    /// How a write was answered.
    enum Answer: Equatable {
        /// Success; a checkout names its order.
        case applied(orderId: String?)
        /// An operational failure the client may retry, as the wire showed it (for the log).
        case failed(String)
        /// Refused (-32001) with this reason: nothing was stored.
        case refused(String)

        var isApplied: Bool { if case .applied = self { true } else { false } }
        var isFailure: Bool { if case .failed = self { true } else { false } }
    }

    /// Names the keys (`PREFIX-N`), so that the keys of one test never meet another's.
    let prefix: String
    private(set) var kinds: [String: Kind] = [:]
    /// Keys in the order they were made.
    private(set) var keys: [String] = []
    private(set) var answers: [String: Answer] = [:]

    init(prefix: String) {
        self.prefix = prefix
    }

    /// A new write's key.
    mutating func key(for kind: Kind) -> String {
        let key = "\(prefix)-\(keys.count)"
        keys.append(key)
        kinds[key] = kind
        return key
    }

    /// Records the answer to `key`'s write.
    mutating func record(_ answer: Answer, for key: String) {
        answers[key] = answer
    }

    /// The method and params of `key`'s write on the cart ViewModel `cart`.
    func call(_ key: String, on cart: String) -> (method: String, params: JSONValue) {
        switch kinds[key]! {
        case .add(let productId):
            ("cart/add", ["viewModel": .string(cart), "productId": .string(productId), "quantity": 1, "idempotencyKey": .string(key)])
        case .checkout:
            ("cart/checkout", ["viewModel": .string(cart), "idempotencyKey": .string(key)])
        }
    }

    /// How `response` answered `key`'s write, given the state of its cart ViewModel when the response was read
    /// (an operational failure of a write answers `{version}` and shows in the state: `error` for a change,
    /// `checkoutPhase` `failed` with `checkoutError` for a checkout); or a description of why the answer is
    /// not one a client can act on (an operational failure that is not retryable, an unknown error).
    ///
    /// A change's success is told by the cart's `error` being null: only that change runs on its cart
    /// ViewModel at a time (the caller's job), and its failure sets `error` until a later change of the same
    /// ViewModel succeeds, so a failure is never taken for a success. (A failed reload of the cart can make
    /// a success look like a failure; that only weakens the check.)
    func answer(to response: JSONValue, for key: String, shown state: JSONValue?) -> Result<Answer, Unexpected> {
        if let error = response["error"] {
            let reason = error["data"]?["reason"]?.stringValue ?? "?"
            switch error["code"]?.integerValue {
            case -32001:
                return .success(.refused(reason))
            case -32003 where reason == "storageFailed" && error["data"]?["retryable"] == true:
                return .success(.failed("-32003 storageFailed: \(error["message"]?.stringValue ?? "")"))
            default:
                return .failure(Unexpected("\(key): an error a client cannot act on: \(response)"))
            }
        }
        guard let result = response["result"] else { return .failure(Unexpected("\(key): neither result nor error: \(response)")) }
        switch kinds[key]! {
        case .add:
            guard let shown = state?["error"], shown != .null else { return .success(.applied(orderId: nil)) }
            guard shown["retryable"] == true else { return .failure(Unexpected("\(key): a failure shown as not retryable: \(shown)")) }
            return .success(.failed("state error: \(shown["message"]?.stringValue ?? "")"))
        case .checkout:
            if let orderId = result["orderId"]?.stringValue { return .success(.applied(orderId: orderId)) }
            // No order: an operational failure. Its `checkoutPhase` `failed` may already have been reset by a
            // newer cart (another server's change) when the answer is read; then only the missing order says so.
            guard state?["checkoutPhase"] == "failed", let shown = state?["checkoutError"] else {
                return .success(.failed("no order; the checkout shows \(state?["checkoutPhase"]?.stringValue ?? "?") (a newer cart reset it)"))
            }
            guard shown["retryable"] == true else { return .failure(Unexpected("\(key): a checkout failure shown as not retryable: \(shown)")) }
            return .success(.failed("checkoutError: \(shown["message"]?.stringValue ?? "")"))
        }
    }

    /// An answer a client could not act on.
    struct Unexpected: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// How many writes of each kind were answered each way.
    var summary: String {
        func count(_ kind: (Kind) -> Bool, _ answer: (Answer) -> Bool) -> Int {
            answers.count { kind(kinds[$0.key]!) && answer($0.value) }
        }
        let isAdd: (Kind) -> Bool = { if case .add = $0 { true } else { false } }
        let isCheckout: (Kind) -> Bool = { $0 == .checkout }
        let isRefused: (Answer) -> Bool = { if case .refused = $0 { true } else { false } }
        return """
            adds: \(count(isAdd, \.isApplied)) applied, \(count(isAdd, \.isFailure)) failed (retryable), \(count(isAdd, isRefused)) refused; \
            checkouts: \(count(isCheckout, \.isApplied)) placed an order, \(count(isCheckout, \.isFailure)) failed (retryable), \
            \(count(isCheckout, isRefused)) refused; \(keys.count - answers.count) never answered
            """
    }

    /// What in `stored` contradicts the answers: see the type's description. `initialStock` is the stock
    /// before any order.
    func problems(in stored: StoredShop, initialStock: [String: Int]) -> [String] {
        var problems = stored.inconsistencies(initialStock: initialStock)
        let storedKeys = stored.idempotencyKeys.filter { $0.key.hasPrefix(prefix + "-") }
        for key in storedKeys.keys.sorted() where kinds[key] == nil {
            problems.append("key \(key) is stored, but no such write was sent")
        }
        for key in keys {
            switch answers[key] {
            case .applied(let orderId)?:
                guard let outcome = storedKeys[key] else {
                    problems.append("\(key) (\(kinds[key]!)) was answered with success, but its key is not stored")
                    continue
                }
                if let orderId {
                    if outcome != "orderId=\(orderId)" { problems.append("\(key) answered order \(orderId), its key stored \(outcome.debugDescription)") }
                    if stored.orders[orderId] == nil { problems.append("\(key) answered order \(orderId), which is not stored") }
                }
            case .refused(let reason)?:
                if storedKeys[key] != nil { problems.append("\(key) was refused (\(reason)), yet its key is stored") }
            case .failed?, nil:
                break  // either way: the stored keys say
            }
        }
        // Every order is the outcome of a stored checkout, and the units add up per product.
        let placed = Set(storedKeys.values.compactMap { $0.hasPrefix("orderId=") ? String($0.dropFirst("orderId=".count)) : nil })
        if Set(stored.orders.keys) != placed {
            problems.append("orders \(stored.orders.keys.sorted()) are not those of the stored checkout keys \(placed.sorted())")
        }
        var added: [String: Int] = [:]
        for key in storedKeys.keys {
            if case .add(let productId)? = kinds[key] { added[productId, default: 0] += 1 }
        }
        let ordered = stored.orderedUnits
        for productId in Set(added.keys).union(ordered.keys).union(stored.cart.keys).sorted() {
            let held = ordered[productId, default: 0] + stored.cart[productId, default: 0]
            if held != added[productId, default: 0] {
                problems.append("\(productId): \(added[productId, default: 0]) units added by stored keys, \(ordered[productId, default: 0]) ordered + \(stored.cart[productId, default: 0]) in the cart")
            }
        }
        return problems
    }
}
