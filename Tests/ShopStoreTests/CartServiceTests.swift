import Foundation
import Shop
import Testing
@testable import ShopStore

@Suite @MainActor struct CartServiceTests {
    let database: ShopDatabase
    let services: ShopServices

    init() throws {
        database = try ShopDatabase(path: ":memory:")
        services = .testing(database)
    }

    /// A product with at least `stock` units and a per-order maximum of at least `maximum`.
    func product(stock: Int = 5, maximum: Int = 3) async throws -> Product {
        let created = try await services.catalog.create(NewProduct(
            name: "Test Product \(stock)-\(maximum)", description: "For tests", price: Money(minorUnits: 1_000),
            categoryId: "electronics", stock: stock, maxPerOrder: maximum))
        return created
    }

    @Test func addingTheSameProductTwiceMergesTheLine() async throws {
        let item = try await product(stock: 10, maximum: 5)
        try await services.cart.add(productId: item.id, quantity: 1, for: .testShopper)
        let cart = try await services.cart.add(productId: item.id, quantity: 2, for: .testShopper)
        #expect(cart.lines.map(\.quantity) == [3])
        #expect(cart.subtotal == Money(minorUnits: 3_000))
        #expect(cart.tax == Money(minorUnits: 570))  // electronics: 19 %
        #expect(cart.total == Money(minorUnits: 3_570))
        #expect(try await services.cart.cart(of: .testShopper) == cart)
    }

    @Test func aGuestsCartIsNeverCheckedOut() async throws {
        let item = try await product()
        let guest = Shopper.guest("cart-tests-guest")
        try await services.cart.add(productId: item.id, quantity: 1, for: guest)
        let refusal = await #expect(throws: ShopError.self) { try await services.orders.placeOrder(expectedRevision: nil, for: guest) }
        #expect(refusal?.reason == "signInRequired")
        #expect(try await services.cart.cart(of: guest).lines.count == 1)
    }

    @Test func addingMoreThanStockOrMaximumIsRefusedAndChangesNothing() async throws {
        let item = try await product(stock: 4, maximum: 3)
        let before = try await services.cart.add(productId: item.id, quantity: 2, for: .testShopper)

        let overMaximum = await #expect(throws: ShopError.self) { try await services.cart.add(productId: item.id, quantity: 2, for: .testShopper) }
        #expect(overMaximum?.reason == "quantityExceedsMaximum")
        #expect(overMaximum?.details["productId"] == item.id)
        let overStock = await #expect(throws: ShopError.self) { try await services.cart.setQuantity(productId: item.id, quantity: 5, for: .testShopper) }
        #expect(overStock?.reason == "quantityExceedsStock")
        let invalid = await #expect(throws: ShopError.self) { try await services.cart.add(productId: item.id, quantity: 0, for: .testShopper) }
        #expect(invalid?.reason == "invalidQuantity")
        let missing = await #expect(throws: ShopError.self) { try await services.cart.add(productId: "p-9999", quantity: 1, for: .testShopper) }
        #expect(missing?.reason == "productNotFound")
        #expect(try await services.cart.cart(of: .testShopper) == before)
    }

    @Test func addingSoManyThatTheLineWouldOverflowIsRefusedNotATrap() async throws {
        let item = try await product(stock: 4, maximum: 3)
        let before = try await services.cart.add(productId: item.id, quantity: 1, for: .testShopper)
        let refusal = await #expect(throws: ShopError.self) { try await services.cart.add(productId: item.id, quantity: .max, for: .testShopper) }
        #expect(refusal?.reason == "quantityExceedsStock")
        #expect(try await services.cart.cart(of: .testShopper) == before)
    }

    @Test func addingAnOutOfStockProductIsRefused() async throws {
        let item = try await product(stock: 0, maximum: 3)
        let error = await #expect(throws: ShopError.self) { try await services.cart.add(productId: item.id, quantity: 1, for: .testShopper) }
        #expect(error?.reason == "outOfStock")
    }

    @Test func settingQuantityZeroRemovesTheLine() async throws {
        let item = try await product()
        try await services.cart.add(productId: item.id, quantity: 1, for: .testShopper)
        let cart = try await services.cart.setQuantity(productId: item.id, quantity: 0, for: .testShopper)
        #expect(cart.lines.isEmpty)
        let error = await #expect(throws: ShopError.self) { try await services.cart.remove(productId: item.id, for: .testShopper) }
        #expect(error?.reason == "notInCart")
    }

    @Test func everyChangeIsPublishedAfterItCommitsWithAHigherRevision() async throws {
        let recorder = EventRecorder(services.events)
        let item = try await product()
        let added = try await services.cart.add(productId: item.id, quantity: 1, for: .testShopper)
        let cleared = try await services.cart.clear(for: .testShopper)
        #expect(cleared.revision > added.revision)
        #expect(recorder.events == [.productCreated(item), .cartChanged(added, shopper: .testShopper), .cartChanged(cleared, shopper: .testShopper)])
    }

    @Test func checkoutWritesTheOrderDecrementsStockAndEmptiesTheCart() async throws {
        let one = try await product(stock: 5, maximum: 5)
        let two = try await product(stock: 7, maximum: 7)
        try await services.cart.add(productId: one.id, quantity: 2, for: .testShopper)
        try await services.cart.add(productId: two.id, quantity: 3, for: .testShopper)
        let recorder = EventRecorder(services.events)

        let order = try await services.orders.placeOrder(expectedRevision: nil, for: .testShopper)

        #expect(order.id == "o-000001")
        #expect(order.createdAt == fixedNow)
        #expect(order.lines.map(\.quantity) == [2, 3])
        #expect(order.subtotal == Money(minorUnits: 5_000))
        #expect(order.tax == Money(minorUnits: 950))
        #expect(order.total == Money(minorUnits: 5_950))
        #expect(try await services.catalog.product(id: one.id).stock == 3)
        #expect(try await services.catalog.product(id: two.id).stock == 4)
        let cart = try await services.cart.cart(of: .testShopper)
        #expect(cart.isEmpty)
        #expect(recorder.events == [.cartChanged(cart, shopper: .testShopper), .orderPlaced(order, shopper: .testShopper)])
        #expect(try await services.orders.recentOrders(limit: 3, of: .testShopper) == [order])
    }

    @Test func checkoutWithOneLineShortOfStockChangesNothing() async throws {
        let plenty = try await product(stock: 10, maximum: 10)
        let scarce = try await product(stock: 3, maximum: 3)
        try await services.cart.add(productId: plenty.id, quantity: 2, for: .testShopper)
        try await services.cart.add(productId: scarce.id, quantity: 3, for: .testShopper)
        // Another customer buys the scarce product: only 1 left.
        try await database.writer.write { db in
            try db.execute(sql: "UPDATE product SET stock = 1 WHERE id = ?", arguments: [scarce.id])
        }
        let cartBefore = try await services.cart.cart(of: .testShopper)
        let recorder = EventRecorder(services.events)

        let error = await #expect(throws: ShopError.self) { try await services.orders.placeOrder(expectedRevision: nil, for: .testShopper) }

        #expect(error?.reason == "quantityExceedsStock")
        #expect(error?.details["productId"] == scarce.id)
        #expect(error?.message.contains(scarce.id) == true)
        #expect(try await services.cart.cart(of: .testShopper) == cartBefore)
        #expect(try await services.catalog.product(id: plenty.id).stock == 10)
        #expect(try await services.catalog.product(id: scarce.id).stock == 1)
        #expect(try await services.orders.recentOrders(limit: 3, of: .testShopper).isEmpty)
        #expect(recorder.events.isEmpty)
    }

    @Test func aPriceOrCategoryChangeMakesANewRevisionOfEveryCartHoldingTheProduct() async throws {
        let item = try await product()
        let other = try await product(stock: 6)
        let seen = try await services.cart.add(productId: item.id, quantity: 2, for: .testShopper)
        let elsewhere = try await services.cart.add(productId: other.id, quantity: 1, for: .account(2))

        _ = try await services.catalog.update(id: item.id, ProductUpdate(stock: 9))
        #expect(try await services.cart.cart(of: .testShopper).revision == seen.revision)  // stock: same charge
        _ = try await services.catalog.update(id: item.id, ProductUpdate(price: Money(minorUnits: 1_500)))
        let repriced = try await services.cart.cart(of: .testShopper)
        #expect(repriced.revision > seen.revision)
        #expect(repriced.subtotal == Money(minorUnits: 3_000))
        #expect(try await services.cart.cart(of: .account(2)).revision == elsewhere.revision)

        // The checkout of the cart as it was seen is refused; the cart as it is now is charged.
        let refusal = await #expect(throws: ShopError.self) {
            try await services.orders.placeOrder(expectedRevision: seen.revision, for: .testShopper)
        }
        #expect(refusal == ShopError.cartChanged(revision: repriced.revision))
        _ = try await services.catalog.update(id: item.id, ProductUpdate(categoryId: "books"))
        let retaxed = try await services.cart.cart(of: .testShopper)
        #expect(retaxed.revision > repriced.revision)
        let order = try await services.orders.placeOrder(expectedRevision: retaxed.revision, for: .testShopper)
        #expect(order.total == retaxed.total)
    }

    @Test func checkoutOfAnEmptyCartIsRefused() async throws {
        let error = await #expect(throws: ShopError.self) { try await services.orders.placeOrder(expectedRevision: nil, for: .testShopper) }
        #expect(error?.reason == "emptyCart")
    }

    @Test func deletingAProductInTheCartRemovesItsLineAndPublishesBoth() async throws {
        let item = try await product()
        try await services.cart.add(productId: item.id, quantity: 1, for: .testShopper)
        try await services.favorites.setFavorite(productId: item.id, isFavorite: true, for: .testShopper)
        let recorder = EventRecorder(services.events)

        try await services.catalog.delete(ids: [item.id, "p-nope"])

        let cart = try await services.cart.cart(of: .testShopper)
        #expect(cart.isEmpty)
        #expect(recorder.events == [.productsDeleted([item.id]), .cartChanged(cart, shopper: .testShopper)])
        #expect(try await !services.favorites.isFavorite(productId: item.id, for: .testShopper))
    }

    @Test func taxRulesTaxEachLineAtItsRateRoundingPerLine() {
        // 10.05 * 7 % = 0.7035 -> 0.70; 5.00 * 19 % = 0.95
        let tax = TaxRules.tax([(Money(minorUnits: 1_005), 700), (Money(minorUnits: 500), 1_900)])
        #expect(tax == Money(minorUnits: 165))
    }

    @Test func recommendationsFollowFavouritesAndFallBackToFeatured() async throws {
        let fallback = try await services.recommendations.recommendations(limit: 5, for: .testShopper)
        #expect(fallback.count == 5)
        #expect(fallback.allSatisfy { $0.isInStock })
        #expect(fallback.first?.isFeatured == true)

        let liked = try await services.catalog.page(ProductQuery(categoryId: "garden", limit: 1)).products[0]
        try await services.favorites.setFavorite(productId: liked.id, isFavorite: true, for: .testShopper)
        let recommended = try await services.recommendations.recommendations(limit: 5, for: .testShopper)
        #expect(recommended.count == 5)
        #expect(recommended.first?.categoryId == "garden")
        #expect(!recommended.contains { $0.id == liked.id })
    }

    @Test func creatingAnInvalidProductIsRefused() async throws {
        let invalid = await #expect(throws: ShopError.self) {
            try await services.catalog.create(NewProduct(name: "ab", description: "", price: .zero, categoryId: "books"))
        }
        #expect(invalid?.reason == "validationFailed")
        #expect(invalid?.details.keys.sorted() == ["name", "price"])
        let unknown = await #expect(throws: ShopError.self) {
            try await services.catalog.create(NewProduct(name: "abc", description: "", price: Money(minorUnits: 1), categoryId: "nope"))
        }
        #expect(unknown?.reason == "categoryNotFound")
    }

    @Test func aProductPricedAboveTheMaximumIsRefusedSoTotalsCannotOverflow() async throws {
        let dear = await #expect(throws: ShopError.self) {
            try await services.catalog.create(NewProduct(
                name: "Gold kettle", description: "", price: Money(decimalString: "999999999999999.99")!, categoryId: "home"))
        }
        #expect(dear?.details.keys.sorted() == ["price"])
        let mostExpensive = try await services.catalog.create(NewProduct(
            name: "Silver kettle", description: "", price: ProductRules.maximumPrice, categoryId: "home"))
        let cart = try await services.cart.add(productId: mostExpensive.id, quantity: mostExpensive.maxPerOrder, for: .testShopper)
        #expect(cart.subtotal == ProductRules.maximumPrice * mostExpensive.maxPerOrder)
    }
}
