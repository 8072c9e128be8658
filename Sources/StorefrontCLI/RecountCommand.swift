import ArgumentParser
import Foundation
import ShopStore

/// `storefront recount`: counts a SQLite catalog's short searches again (``ShopDatabase/recountSearch()``).
struct RecountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recount",
        abstract: "Count a SQLite catalog's short searches again, after an older server or a change made behind the store left them unused.")

    @OptionGroup var store: StoreOptions

    func run() throws {
        switch try store.open() {
        case .sqlite(let database):
            let started = Date()
            let stale = try runBlocking { try await database.recountSearch() }
            let seconds = Date().timeIntervalSince(started)
            print("recounted the search counts of \(database.path) in \(String(format: "%.1f", seconds)) s (they were \(stale ? "stale" : "current"))")
        case .postgres(let database):
            print("\(database.url.description) keeps no search counts (PostgreSQL counts as it searches): nothing to do")
        }
    }
}
