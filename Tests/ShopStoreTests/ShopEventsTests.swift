import Shop
import Testing

@Suite @MainActor struct ShopEventsTests {
    @Test func deliversSynchronouslyInSubscriptionOrder() {
        let feed = ShopEvents()
        var log: [String] = []
        let first = feed.subscribe { _ in log.append("first") }
        let second = feed.subscribe { _ in log.append("second") }
        feed.publish(.productsDeleted(["p-0001"]))
        #expect(log == ["first", "second"])
        _ = (first, second)
    }

    @Test func cancellingOrReleasingASubscriptionStopsDelivery() {
        let feed = ShopEvents()
        var count = 0
        let kept = feed.subscribe { _ in count += 1 }
        var released: ShopSubscription? = feed.subscribe { _ in count += 10 }
        feed.publish(.productsDeleted([]))
        #expect(count == 11)
        released = nil
        kept.cancel()
        kept.cancel()
        feed.publish(.productsDeleted([]))
        #expect(count == 11)
        #expect(feed.subscriberCount == 0)
        _ = released
    }

    @Test func aSubscriberCancelledDuringDeliveryIsSkipped() {
        let feed = ShopEvents()
        var log: [String] = []
        var second: ShopSubscription?
        let first = feed.subscribe { _ in log.append("first"); second?.cancel() }
        second = feed.subscribe { _ in log.append("second") }
        feed.publish(.productsDeleted([]))
        #expect(log == ["first"])
        _ = first
    }

    @Test func onceOneIsCancelledDuringDeliveryTheOthersStillSubscribedAreStillCalled() {
        let feed = ShopEvents()
        var log: [String] = []
        var subscriptions: [String: ShopSubscription] = [:]
        for name in ["a", "b", "c", "d"] {
            subscriptions[name] = feed.subscribe { _ in
                log.append(name)
                // b cancels a (already called) and d (not yet): c is still called, d is not.
                if name == "b" { subscriptions["a"]?.cancel(); subscriptions["d"]?.cancel() }
            }
        }
        feed.publish(.productsDeleted([]))
        #expect(log == ["a", "b", "c"])
        log = []
        feed.publish(.productsDeleted([]))
        #expect(log == ["b", "c"])
        // One subscribed during a delivery is called from the next one on.
        var late: ShopSubscription?
        let adding = feed.subscribe { _ in if late == nil { late = feed.subscribe { _ in log.append("late") } } }
        log = []
        feed.publish(.productsDeleted([]))
        #expect(log == ["b", "c"])
        feed.publish(.productsDeleted([]))
        #expect(log == ["b", "c", "b", "c", "late"])
        _ = (subscriptions, adding)
    }

    @Test func theAsyncSequenceViewYieldsPublishedEvents() async {
        let feed = ShopEvents()
        let stream = feed.events()
        feed.publish(.favoriteChanged(productId: "p-0001", isFavorite: true, shopper: .testShopper))
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == .favoriteChanged(productId: "p-0001", isFavorite: true, shopper: .testShopper))
    }

    @Test func settledWaitsForTheWorkEventsCausedAndReturnsAtOnceWithoutAny() async {
        let feed = ShopEvents()
        await feed.settled()  // nothing tracked: at once
        let (gate, open) = AsyncStream<Void>.makeStream()
        let reload = Task { for await _ in gate { return } }
        feed.track(reload)
        #expect(!feed.isSettled)
        let waiter = Task { await feed.settled(); return true }
        open.yield()
        #expect(await waiter.value)
        #expect(feed.isSettled)
    }
}
