import Credentials
import Foundation
import Shop
@testable import ShopStore

/// A folder under the system's temporary directory, removed when released.
final class TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("shopstore-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of the shop database in this folder.
    var databasePath: String { url.appendingPathComponent("shop.sqlite").path }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Records the events published on a feed.
@MainActor
final class EventRecorder {
    private(set) var events: [ShopEvent] = []
    private var subscription: ShopSubscription?

    init(_ feed: ShopEvents) {
        subscription = feed.subscribe { [weak self] in self?.events.append($0) }
    }
}

/// A fixed date, so created products and orders have predictable dates.
let fixedNow = Date(timeIntervalSince1970: 1_750_000_000)

extension ShopServices {
    /// Live services over `database` with a fixed clock for creation dates.
    static func testing(_ database: ShopDatabase, events: ShopEvents = ShopEvents()) -> ShopServices {
        .live(database: database, events: events, now: { fixedNow }, hasher: PasswordHasher(cost: .minimum))
    }
}

extension Shopper {
    /// The shopper the store tests act as (an account: checkout needs one).
    static let testShopper = Shopper.account(1)
}
