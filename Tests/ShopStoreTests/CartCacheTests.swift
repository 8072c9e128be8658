import Foundation
import GRDB
import Randomness
import Shop
import Testing
@testable import ShopStore

/// Cart changes derive their cart from the one kept at the revision before (`CartCache`): checked against
/// the stored cart, read whole, after every step of a seeded mix of cart changes, checkouts, product edits
/// and deletions, made through two databases on one file (two processes, each with its own cache).
@Suite @MainActor struct CartCacheTests {
    @Test(arguments: [1, 2, 3] as [UInt64])
    func aDerivedCartIsTheStoredCart(seed: UInt64) async throws {
        let folder = try TemporaryFolder()
        let databases = [try ShopDatabase(path: folder.databasePath), try ShopDatabase(path: folder.databasePath)]
        let services = databases.map { ShopServices.testing($0) }
        var products: [String] = []
        for number in 1...6 {
            products.append(try await services[0].catalog.create(NewProduct(
                name: "Cache test \(number)", description: "For tests", price: Money(minorUnits: Int64(1_000 + number)),
                categoryId: number % 2 == 0 ? "electronics" : "books", stock: 5_000, maxPerOrder: 50)).id)
        }
        let shoppers: [Shopper] = [.account(1), .account(2)]
        var random = SeededRandom(seed: seed)
        var derived = 0
        for step in 0..<400 {
            let side = Int.random(in: 0...1, using: &random)
            let shopper = shoppers.randomElement(using: &random)!
            let product = products.randomElement(using: &random)!
            var answered: Cart?
            do {
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<35: answered = try await services[side].cart.add(productId: product, quantity: Int.random(in: 1...3, using: &random), for: shopper)
                case 35..<55: answered = try await services[side].cart.setQuantity(productId: product, quantity: Int.random(in: 0...4, using: &random), for: shopper)
                case 55..<65: answered = try await services[side].cart.remove(productId: product, for: shopper)
                case 65..<70: answered = try await services[side].cart.clear(for: shopper)
                case 70..<75: _ = try await services[side].orders.placeOrder(expectedRevision: nil, for: shopper)
                case 75..<83: _ = try await services[side].catalog.update(id: product, ProductUpdate(price: Money(minorUnits: Int64.random(in: 500...1_500, using: &random))))
                case 83..<90: _ = try await services[side].catalog.update(id: product, ProductUpdate(name: "Renamed \(step)"))
                case 90..<96: _ = try await services[side].catalog.update(id: product, ProductUpdate(categoryId: ["books", "electronics", "garden"].randomElement(using: &random)!))
                case 96..<98: _ = try await services[side].catalog.update(id: product, ProductUpdate(stock: Int.random(in: 100...5_000, using: &random)))
                default:
                    try await services[side].catalog.delete(ids: [product])
                    products.removeAll { $0 == product }
                    products.append(try await services[side].catalog.create(NewProduct(
                        name: "Cache test new \(step)", description: "For tests", price: Money(minorUnits: 900),
                        categoryId: "garden", stock: 5_000, maxPerOrder: 50)).id)
                }
            } catch let error as ShopError where error.reason != ShopError.Reason.storageFailed {
                continue  // refused (not in cart, an empty cart's checkout): nothing changed
            }
            guard let answered else { continue }
            let stored = try await databases[side].writer.read { db in try StoredRows.cart(db, of: shopper) }
            #expect(answered == stored, "step \(step): the cart answered differs from the stored one")
        }
        // The derivation was taken often (not only full reads), and missed when the other side had changed
        // the cart or a product in it.
        derived = databases[0].cartCache.derivedCarts + databases[1].cartCache.derivedCarts
        #expect(derived > 50)
    }
}
