import Foundation
import JSON
import JSONPatch
import Shop
import ShopFeatures
import Testing
@testable import ViewModelBinding

/// A cart service holding one priced cart in memory, for the patch the host sends when it changes.
/// Only `cart()` and `setQuantity` are expected; anything else fails the test.
final class InMemoryCartService: CartService {
    struct Unexpected: Error {}

    private let current: Locked<Cart>

    /// A cart of `lines`, taxed at 16 %.
    init(lines: [CartLine]) {
        current = Locked(Self.priced(lines, revision: 1))
    }

    static func priced(_ lines: [CartLine], revision: Int64) -> Cart {
        Cart(lines: lines, tax: lines.map(\.lineTotal).sum().applying(basisPoints: 1_600), revision: revision)
    }

    func cart(of shopper: Shopper) async throws -> Cart { current.withLock { $0 } }

    func setQuantity(productId: String, quantity: Int, for shopper: Shopper) async throws -> Cart {
        current.withLock { cart in
            var lines = cart.lines
            if let index = lines.firstIndex(where: { $0.productId == productId }) { lines[index].quantity = quantity }
            cart = Self.priced(lines, revision: cart.revision + 1)
            return cart
        }
    }

    func add(productId: String, quantity: Int, for shopper: Shopper) async throws -> Cart { try unexpected("add") }
    func remove(productId: String, for shopper: Shopper) async throws -> Cart { try unexpected("remove") }
    func clear(for shopper: Shopper) async throws -> Cart { try unexpected("clear") }

    private func unexpected<T>(_ name: String) throws -> T {
        Issue.record("unexpected call of cart.\(name)")
        throw Unexpected()
    }
}

/// An order service nobody may call: the patch-size test places no order.
/// Drops every event; trending must not be asked.
struct DiscardedAnalytics: AnalyticsService {
    func record(_ event: AnalyticsEvent) {}
    func trending(since: Date, limit: Int) async throws -> [TrendingProduct] {
        Issue.record("unexpected call of analytics.trending")
        throw InMemoryCartService.Unexpected()
    }
    func flush() async {}
}

struct UnusedOrderService: OrderService {
    func recentOrders(limit: Int, of shopper: Shopper) async throws -> [Order] { try unexpected("recentOrders") }
    func placeOrder(expectedRevision: Int64?, for shopper: Shopper) async throws -> Order { try unexpected("placeOrder") }

    private func unexpected<T>(_ name: String) throws -> T {
        Issue.record("unexpected call of orders.\(name)")
        throw InMemoryCartService.Unexpected()
    }
}

@MainActor @Suite struct CartPatchSizeTests {
    /// 100 lines of one unit each, with prices from 4.99 to 904.98.
    static let lines = (1...100).map { number in
        CartLine(productId: "p-\(number)", name: "Product \(number)", categoryId: "books",
                 unitPrice: Money(minorUnits: Int64(499 + (number * 7_919) % 90_000)), quantity: 1)
    }

    @Test func aOneLineQuantityChangeInAHundredLineCartIsTwoOperationsOfAtMost200Bytes() async throws {
        let service = InMemoryCartService(lines: Self.lines)
        let events = ShopEvents()
        let model = CartViewModel(cart: service, orders: UnusedOrderService(), analytics: DiscardedAnalytics(), events: events, session: .guestForTests(events: events))
        let cart = ViewModelDefinition<Void>.screen("cart", actions: []) { model }
        let harness = Harness(definitions: [cart], vocabulary: registerShopVocabulary)
        harness.send(1, "viewModel/open", ["type": "cart"])
        // The load awaits this file's service, whose methods run on the global executor (this test target
        // does not make them nonisolated(nonsending)): wait for the loaded state, not for a number of yields.
        await harness.settle(until: { model.phase == .loaded })
        _ = harness.takeMessages()
        try #require(model.phase == .loaded)
        #expect(model.state.totals.itemCount == 100)

        try await model.setQuantity(productId: "p-51", quantity: 2)
        await harness.settle()

        let messages = harness.takeMessages()
        try #require(messages.count == 1, "\(messages)")
        let patch = try #require(messages[0]["params"]?["patch"])
        #expect(patch == [
            ["op": "replace", "path": "/lines/50/quantity", "value": 2],
            ["op": "replace", "path": "/totals", "value": [
                "itemCount": 101, "subtotal": "45352.18", "tax": "7256.35", "total": "52608.53",
            ]],
        ])
        #expect(patch.serialized().count <= 200, "\(patch.serializedString())")
    }
}
