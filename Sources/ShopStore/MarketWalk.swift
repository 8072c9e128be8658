import Randomness
import Shop

/// The seeded random walk of a market simulation, shared by the simulators of both stores: each change
/// picks a product uniformly, moves its price by -2 % to +2 % (at least one cent, within 0.01 …
/// ``ProductRules/maximumPrice``), and one time in four its stock by -3 to +3 units (at least 0, at most
/// ``ProductRules/maximumStock``). The same seed and catalog give the same changes.
package struct MarketWalk: Sendable {
    /// One step of the walk.
    package struct Change: Equatable, Sendable {
        /// The product it changes.
        package var productId: String
        /// How far its price moves, in hundredths of a percent (-200 … 200).
        package var priceStep: Int
        /// How far its stock moves, in units (-3 … 3; mostly 0).
        package var stockStep: Int

        /// `product` with this change applied (equal to it when the change moves nothing, e.g. a price of
        /// one cent going down).
        package func applied(to product: Product) -> Product {
            var changed = product
            changed.price = MarketWalk.walk(product.price, basisPoints: priceStep)
            changed.stock = min(ProductRules.maximumStock, max(0, product.stock + stockStep))
            return changed
        }
    }

    private var random: SeededRandom

    /// A walk starting from `seed`.
    package init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    /// The next change, for one of `productIds` (which must not be empty).
    package mutating func nextChange(among productIds: [String]) -> Change {
        let productId = productIds[Int(random.next() % UInt64(productIds.count))]
        let priceStep = Int(random.next() % 401) - 200
        let stockStep = random.next() % 4 == 0 ? Int(random.next() % 7) - 3 : 0
        return Change(productId: productId, priceStep: priceStep, stockStep: stockStep)
    }

    /// `price` moved by `basisPoints` hundredths of a percent (at least a cent when not 0), within
    /// 0.01 … ``ProductRules/maximumPrice``.
    package static func walk(_ price: Money, basisPoints: Int) -> Money {
        var delta = price.minorUnits * Int64(basisPoints) / 10_000
        if delta == 0 && basisPoints != 0 { delta = basisPoints > 0 ? 1 : -1 }
        return Money(minorUnits: min(ProductRules.maximumPrice.minorUnits, max(1, price.minorUnits + delta)))
    }
}
