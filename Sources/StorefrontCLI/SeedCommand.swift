import ArgumentParser
import Dispatch
import ShopStore

/// `storefront seed`: replaces the catalog with a generated one, for benchmarks.
struct SeedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seed",
        abstract: "Replace the catalog with N generated products (deterministic; empties cart and favourites, keeps orders).")

    @Option(help: "How many products to generate.")
    var products: Int

    @OptionGroup var store: StoreOptions

    func validate() throws {
        guard products >= 1 else { throw ValidationError("--products must be at least 1") }
    }

    func run() throws {
        let database = try store.open()
        let count = products
        try runBlocking { try await database.seed(products: count) }
        let total = try runBlocking { try await database.productCount() }
        print("seeded \(total) products into \(database.description)")
    }
}

/// Runs async work to completion from synchronous command code (the commands keep a synchronous main so
/// that `serve` can run its own event loop on the main thread).
func runBlocking<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    nonisolated(unsafe) var result: Result<T, any Error>?
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { result = .success(try await work()) } catch { result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try result!.get()
}
