import Foundation
import Shop
import TestWaits
import Testing
@testable import ShopFeatures

/// `priceTicker`: loads a product and its history, follows stored changes (coalesced), and stops
/// following on disconnect and close.
@Suite @MainActor struct PriceTickerViewModelTests {
    let catalog = CatalogServiceDouble()
    let events = ShopEvents()
    let product = Fixture.product(3, price: 2_000, stock: 5)

    func point(_ price: Int64, _ stock: Int, _ minute: Double) -> PricePoint {
        PricePoint(price: Money(minorUnits: price), stock: stock, at: Fixture.date.addingTimeInterval(minute * 60))
    }

    func opened(history: [PricePoint]) async -> PriceTickerViewModel {
        catalog.product.returns(product)
        catalog.priceHistory.returns(history)
        let viewModel = PriceTickerViewModel(productId: product.id, catalog: catalog, events: events)
        viewModel.appear()
        await settle { viewModel.phase == .loaded }
        return viewModel
    }

    func state(price: Int64?, stock: Int?, history: [PricePoint], isConnected: Bool = true, phase: PhaseName = .loaded) -> PriceTickerState {
        PriceTickerState(
            phase: phase, error: nil, productId: product.id, name: product.name,
            currentPrice: price.map { Money(minorUnits: $0) }, stock: stock, priceHistory: history.map(PricePointSnapshot.init),
            isConnected: isConnected)
    }

    @Test func opensConnectedWithTheProductAndItsHistory() async throws {
        let history = [point(2_100, 6, 0), point(2_000, 5, 1)]
        let viewModel = await opened(history: history)
        #expect(viewModel.state == state(price: 2_000, stock: 5, history: history))
        #expect(catalog.priceHistory.calls == [product.id])
    }

    @Test func storedChangesShowAndThoseArrivingDuringALoadCoalesceIntoOneMore() async throws {
        let viewModel = await opened(history: [point(2_000, 5, 0)])
        let gate = Gate()
        let stored = Locked([point(2_000, 5, 0)])
        var changed = product
        catalog.priceHistory.handle { _ in await gate.wait(); return stored.withLock { $0 } }

        func change(to price: Int64, minute: Double) {
            changed.price = Money(minorUnits: price)
            let snapshot = changed
            catalog.product.handle { _ in snapshot }
            stored.withLock { $0.append(point(price, 5, minute)) }
            events.publish(.productChanged(snapshot))
        }
        change(to: 1_900, minute: 1)
        await settle { gate.waiting == 1 }  // the follow-up load reads
        for (index, price) in [1_800, 1_700, 1_600].enumerated() { change(to: Int64(price), minute: Double(index + 2)) }
        // Shown with the history: once more for the three changes that came meanwhile.
        #expect(viewModel.state.currentPrice == Money(minorUnits: 2_000))
        gate.open()
        await events.settled()
        #expect(catalog.priceHistory.calls.count == 3)  // the open's, the follow-up's, and one more
        #expect(viewModel.state == state(price: 1_600, stock: 5, history: stored.withLock { $0 }))
    }

    @Test func aChangeStoredWhileTheFirstLoadReadsShowsAfterIt() async throws {
        let gate = Gate()
        let stored = Locked((product, [point(2_000, 5, 0)]))
        // Each read takes what is stored when it starts, then waits: the first load read before the change.
        catalog.product.handle { _ in
            let value = stored.withLock { $0.0 }
            await gate.wait()
            return value
        }
        catalog.priceHistory.handle { _ in
            let value = stored.withLock { $0.1 }
            await gate.wait()
            return value
        }
        let viewModel = PriceTickerViewModel(productId: product.id, catalog: catalog, events: events)
        viewModel.appear()
        await settle { gate.waiting == 2 }

        var changed = product
        changed.price = Money(minorUnits: 1_800)
        stored.withLock { $0 = (changed, [point(2_000, 5, 0), point(1_800, 5, 1)]) }
        events.publish(.productChanged(changed))
        gate.open()
        await events.settled()
        #expect(viewModel.state == state(price: 1_800, stock: 5, history: [point(2_000, 5, 0), point(1_800, 5, 1)]))
    }

    @Test func anOrderOfTheProductReloadsItsStock() async throws {
        let viewModel = await opened(history: [point(2_000, 5, 0)])
        var sold = product
        sold.stock = 3
        catalog.product.returns(sold)
        catalog.priceHistory.returns([point(2_000, 5, 0), point(2_000, 3, 1)])
        events.publish(.orderPlaced(Fixture.order(1, lines: [Fixture.line(product, quantity: 2)]), shopper: .guest("g")))
        await events.settled()
        #expect(viewModel.state == state(price: 2_000, stock: 3, history: [point(2_000, 5, 0), point(2_000, 3, 1)]))
    }

    @Test func disconnectStopsFollowingAndConnectLoadsAgain() async throws {
        let before = events.subscriberCount
        let viewModel = await opened(history: [point(2_000, 5, 0)])
        #expect(events.subscriberCount == before + 1)
        viewModel.disconnect()
        #expect(events.subscriberCount == before)
        var changed = product
        changed.price = Money(minorUnits: 1)
        events.publish(.productChanged(changed))
        #expect(viewModel.state == state(price: 2_000, stock: 5, history: [point(2_000, 5, 0)], isConnected: false))

        catalog.product.returns(changed)
        catalog.priceHistory.returns([point(2_000, 5, 0), point(1, 5, 1)])
        viewModel.connect()
        await settle { viewModel.phase == .loaded }
        #expect(viewModel.state == state(price: 1, stock: 5, history: [point(2_000, 5, 0), point(1, 5, 1)]))
        viewModel.close()
        #expect(events.subscriberCount == before)
        #expect(!viewModel.isConnected)
    }

    @Test func closingDuringAFollowUpCancelsItAndNothingKeepsRunning() async throws {
        let viewModel = await opened(history: [])
        let gate = Gate()
        catalog.priceHistory.handle { _ in await gate.wait(); try Task.checkCancellation(); return [] }
        events.publish(.productChanged(product))
        await settle { gate.waiting == 1 }
        viewModel.close()
        gate.open()
        await events.settled()  // the tracked follow-up ended
        #expect(events.isSettled)
    }

    @Test func aDeletedOrUnknownProductFailsTheTicker() async throws {
        let viewModel = await opened(history: [])
        events.publish(.productsDeleted([product.id]))
        #expect(viewModel.state == PriceTickerState(
            phase: .failed, error: ErrorInfo(message: "This product is no longer available.", retryable: false),
            productId: product.id, name: "", currentPrice: nil, stock: nil, priceHistory: [], isConnected: true))

        catalog.product.fails(ShopError.productNotFound("p-0404"))
        catalog.priceHistory.fails(ShopError.productNotFound("p-0404"))
        let unknown = PriceTickerViewModel(productId: "p-0404", catalog: catalog, events: events)
        unknown.appear()
        await settle { unknown.phase != .loading }
        #expect(unknown.state.phase == .failed)
        #expect(unknown.state.error?.retryable == false)
    }
}
