import JSON
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension PostgresFaultTests {
    /// A server on the database, signed in to the test's account, with cart ViewModels: a change in flight
    /// has one to itself (its failure shows in that one's `error`), and checkouts go to one more.
    @MainActor
    final class Side {
        let name: String
        let server: ServerProcess
        let client: MirroringClient
        /// Cart ViewModels for changes, one per change in flight.
        let carts: [String]
        /// The cart ViewModel checkouts are sent to.
        let checkoutCart: String

        /// Starts a server on `url`, signs it up (the first) or in (`account`), opens `carts` + 1 carts and
        /// waits until they are loaded.
        init(_ name: String, database url: String, account: inout SignedInAccount?, carts count: Int) throws {
            self.name = name
            let server = try ServerProcess(["--database", url, "--framing", "ndjson"], timeoutSeconds: 90)
            let client = MirroringClient(server)
            self.server = server
            self.client = client
            try client.initialize()
            if let account { try client.resume(account) } else { account = try client.signUp(email: "faults@example.com") }
            let handles = try (0...count).map { _ in try client.open("cart") }
            for handle in handles { try client.waitUntil(handle) { $0["phase"] == "loaded" } }
            carts = Array(handles.dropLast())
            checkoutCart = handles.last!
        }

        /// The lines `handle` shows, once it shows a loaded cart.
        func shownLines(_ handle: String) -> [StoredShop.StoredLine]? {
            guard let state = client.mirrors[handle]?.state, state["phase"] == "loaded" else { return nil }
            return StoredShop.cartLines(of: state)
        }

        /// Ends the server by closing its input; returns its exit status.
        func exit() throws -> Int32 {
            server.closeInput()
            return try server.waitForExit()
        }
    }

    /// One write answered.
    struct Answered: CustomStringConvertible {
        let key: String
        let side: String
        let answer: KeyedWriteLedger.Answer
        /// When it was sent and answered (monotonic milliseconds).
        let sent: Int64
        let answered: Int64

        var milliseconds: Int64 { answered - sent }
        var description: String { "\(side) \(key): \(answer) after \(milliseconds) ms" }
    }

    /// Keyed writes in flight on several servers at once: sent pipelined, each change on a cart ViewModel of
    /// its own, answers read from every server as they come and recorded in ``ledger``.
    @MainActor
    final class KeyedLoad {
        private struct InFlight {
            let key: String
            let cart: String
            let sent: Int64
        }

        var ledger: KeyedWriteLedger
        /// Every answer, in the order read.
        private(set) var answered: [Answered] = []
        private var inFlight: [ObjectIdentifier: [Int64: InFlight]] = [:]
        private let sides: [Side]
        /// How long a write may go unanswered: a guard against a hang.
        let guardMilliseconds: Int64

        init(_ sides: [Side], ledger: KeyedWriteLedger, guardMilliseconds: Int64) {
            self.sides = sides
            self.ledger = ledger
            self.guardMilliseconds = guardMilliseconds
        }

        /// Whether nothing is in flight.
        var isIdle: Bool { inFlight.values.allSatisfy(\.isEmpty) }

        /// `side`'s change cart ViewModels with nothing in flight.
        func idleCarts(of side: Side) -> [String] {
            let busy = Set((inFlight[ObjectIdentifier(side)] ?? [:]).values.map(\.cart))
            return side.carts.filter { !busy.contains($0) }
        }

        /// Sends `writes` to `side` in one write (pipelined): changes on the given cart ViewModels, checkouts
        /// on the side's checkout cart.
        func send(_ side: Side, _ writes: [(kind: KeyedWriteLedger.Kind, cart: String)]) throws {
            guard !writes.isEmpty else { return }
            let keys = writes.map { ledger.key(for: $0.kind) }
            let sent = monotonicMilliseconds()
            let ids = try side.client.send(zip(keys, writes).map { ledger.call($0, on: $1.cart) })
            for (id, (key, write)) in zip(ids, zip(keys, writes)) {
                inFlight[ObjectIdentifier(side), default: [:]][id] = InFlight(key: key, cart: write.cart, sent: sent)
            }
        }

        /// Sends `kinds` to `side` (the changes on its first cart ViewModels, a checkout on its checkout cart).
        func send(_ side: Side, _ kinds: [KeyedWriteLedger.Kind]) throws {
            var carts = side.carts.makeIterator()
            try send(side, kinds.map { kind in
                guard let cart = kind == .checkout ? side.checkoutCart : carts.next() else {
                    throw ServerProcessError(description: "more changes than cart ViewModels on \(side.name)")
                }
                return (kind, cart)
            })
        }

        /// Reads what the servers with writes in flight have said (waiting up to 10 ms on each), records the
        /// answers, and returns the new ones. Throws when a write has been unanswered for longer than the
        /// guard, a server's output ended, or an answer is one a client cannot act on.
        @discardableResult
        func pump() throws -> [Answered] {
            var new: [Answered] = []
            for side in sides where !(inFlight[ObjectIdentifier(side)]?.isEmpty ?? true) {
                let messages = try side.server.receiveAvailable(framing: .ndjson, waitingMilliseconds: 10)
                guard !messages.isEmpty || side.server.isOutputOpen else {
                    throw ServerProcessError(description: "\(side.name)'s stdout ended; stderr: \(side.server.errorText.suffix(2_000))")
                }
                for message in messages {
                    try side.client.handle(message)
                    guard let id = message["id"]?.integerValue,
                          let write = inFlight[ObjectIdentifier(side)]?.removeValue(forKey: id) else { continue }
                    let response = side.client.takeResponse(id)!
                    let answer = try ledger.answer(to: response, for: write.key, shown: side.client.mirrors[write.cart]?.state).get()
                    ledger.record(answer, for: write.key)
                    new.append(Answered(key: write.key, side: side.name, answer: answer, sent: write.sent, answered: monotonicMilliseconds()))
                }
                let now = monotonicMilliseconds()
                if let late = inFlight[ObjectIdentifier(side)]?.values.first(where: { now - $0.sent > guardMilliseconds }) {
                    throw ServerProcessError(description: """
                        \(side.name): \(late.key) not answered within \(guardMilliseconds) ms (a hang); \
                        stderr: \(side.server.errorText.suffix(2_000))
                        """)
                }
            }
            answered += new
            return new
        }

        /// Reads until nothing is in flight.
        func drain() throws {
            while !isIdle { try pump() }
        }

        /// Sends `kinds` to `side`, reads until they are answered, and returns their answers.
        func exchange(_ side: Side, _ kinds: [KeyedWriteLedger.Kind]) throws -> [Answered] {
            let before = answered.count
            try send(side, kinds)
            try drain()
            return Array(answered[before...])
        }
    }
}
