import Randomness
import Foundation
import GRDB
import Shop

/// The deterministic demo catalog: 10 categories and generated products.
///
/// Everything comes from ``seed`` through ``SeededRandom``, so every run, machine and process makes
/// the same catalog: product `p-0001` always has the same name, price and stock.
package enum DemoCatalog {
    /// Products in a fresh database.
    package static let defaultProductCount = 240
    /// The generator's seed.
    package static let seed: UInt64 = 0x5EED_5709_EF00_0001
    /// The newest demo product's creation date: 2025-06-01T00:00:00Z.
    static let newestDate = Date(timeIntervalSince1970: 1_748_736_000)

    /// Categories with their tax rate in basis points.
    package static let categories: [(category: Category, taxRate: Int, nouns: [String])] = [
        (Category(id: "books", name: "Books"), 700,
         ["Novel", "Cookbook", "Atlas", "Notebook", "Poetry Collection", "Field Guide", "Biography", "Comic"]),
        (Category(id: "electronics", name: "Electronics"), 1900,
         ["Headphones", "Speaker", "Charger", "Keyboard", "Mouse", "Webcam", "Power Bank", "Radio"]),
        (Category(id: "home", name: "Home & Kitchen"), 1900,
         ["Kettle", "Teapot", "Frying Pan", "Cutting Board", "Lamp", "Blanket", "Vase", "Mug"]),
        (Category(id: "garden", name: "Garden"), 1900,
         ["Trowel", "Watering Can", "Planter", "Hose", "Bird Feeder", "Rake", "Seed Kit", "Bench"]),
        (Category(id: "toys", name: "Toys"), 1900,
         ["Puzzle", "Kite", "Building Set", "Teddy Bear", "Yo-Yo", "Board Game", "Train Set", "Spinning Top"]),
        (Category(id: "sports", name: "Sports & Outdoors"), 1900,
         ["Yoga Mat", "Water Bottle", "Tent", "Backpack", "Jump Rope", "Football", "Compass", "Headlamp"]),
        (Category(id: "clothing", name: "Clothing"), 1900,
         ["Scarf", "Sweater", "Rain Jacket", "Beanie", "Socks", "Gloves", "T-Shirt", "Belt"]),
        (Category(id: "grocery", name: "Grocery"), 700,
         ["Coffee Beans", "Tea Blend", "Olive Oil", "Honey", "Chocolate", "Granola", "Pasta", "Spice Mix"]),
        (Category(id: "beauty", name: "Beauty"), 1900,
         ["Soap", "Hand Cream", "Shampoo", "Lip Balm", "Face Mask", "Candle", "Bath Salts", "Comb"]),
        (Category(id: "office", name: "Office"), 1900,
         ["Pen Set", "Desk Organizer", "Stapler", "Planner", "Desk Lamp", "Paper Tray", "Sticky Notes", "Ruler"]),
    ]

    private static let adjectives = [
        "Classic", "Compact", "Deluxe", "Everyday", "Handmade", "Lightweight", "Modern", "Nordic",
        "Organic", "Portable", "Rustic", "Sturdy", "Vintage", "Cozy", "Smart", "Elegant",
    ]
    private static let materials = [
        "Oak", "Bamboo", "Steel", "Cotton", "Ceramic", "Leather", "Wool", "Glass", "Copper", "Linen",
    ]
    private static let blurbs = [
        "Built to last and easy to care for.",
        "A customer favourite, now in a fresh design.",
        "Made in small batches by independent makers.",
        "Thoughtfully designed for small spaces.",
        "Perfect as a gift for friends and family.",
        "Tested for everyday use, season after season.",
    ]
    private static let maxPerOrderChoices = [1, 2, 3, 5, 5, 10, 10, 20]

    /// Inserts the categories (if missing) and products `1...productCount` with one prepared statement.
    /// Call inside a transaction, on a database without products.
    static func insert(productCount: Int, into db: Database) throws {
        let categoryInsert = try db.makeStatement(
            sql: "INSERT OR IGNORE INTO category (id, name, taxRate) VALUES (?, ?, ?)")
        for entry in categories {
            try categoryInsert.execute(arguments: [entry.category.id, entry.category.name, entry.taxRate])
        }
        let productInsert = try db.makeStatement(sql: """
            INSERT INTO product (seq, id, name, description, price, categoryId, stock, maxPerOrder, createdAt, isFeatured)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        var random = SeededRandom(seed: seed)
        let width = max(4, String(productCount).count)
        guard productCount > 0 else { return }
        for number in 1...productCount {
            let product = makeProduct(number: number, of: productCount, idWidth: width, random: &random)
            productInsert.setUncheckedArguments([
                number, product.id, product.name, product.description, product.price.minorUnits,
                product.categoryId, product.stock, product.maxPerOrder,
                StoredDate.milliseconds(product.createdAt), product.isFeatured,
            ])
            try productInsert.execute()
        }
    }

    /// Product number `number` of `count`; later numbers are newer.
    package static func makeProduct(number: Int, of count: Int, idWidth: Int, random: inout SeededRandom) -> Product {
        let entry = categories[Int.random(in: 0..<categories.count, using: &random)]
        let adjective = adjectives.randomElement(using: &random)!
        let material = materials.randomElement(using: &random)!
        let noun = entry.nouns.randomElement(using: &random)!
        let name = "\(adjective) \(material) \(noun)"
        let description = "A \(adjective.lowercased()) \(noun.lowercased()) in \(material.lowercased()). "
            + blurbs.randomElement(using: &random)!
        let price = Money(minorUnits: Int64.random(in: 1...499, using: &random) * 100 + 99)
        let stock = Int.random(in: 0..<100, using: &random) < 8 ? 0 : Int.random(in: 1...250, using: &random)
        let maxPerOrder = maxPerOrderChoices.randomElement(using: &random)!
        let minutesAgo = (count - number) * 180 + Int.random(in: 0..<180, using: &random)
        let isFeatured = stock > 0 && Int.random(in: 0..<100, using: &random) < 6
        return Product(
            id: Identifiers.product(number, width: idWidth), name: name, description: description, price: price,
            categoryId: entry.category.id, stock: stock, maxPerOrder: maxPerOrder,
            createdAt: newestDate.addingTimeInterval(-Double(minutesAgo) * 60), isFeatured: isFeatured)
    }
}

/// Product and order identifiers.
package enum Identifiers {
    /// `"p-"` and the number, zero-padded to `width` digits.
    package static func product(_ number: Int, width: Int = 4) -> String {
        "p-" + zeroPadded(number, width: width)
    }

    /// `"o-"` and the number, zero-padded to 6 digits.
    package static func order(_ number: Int) -> String {
        "o-" + zeroPadded(number, width: 6)
    }

    private static func zeroPadded(_ number: Int, width: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

/// Dates as stored: integer milliseconds since 1970.
package enum StoredDate {
    package static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    package static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
