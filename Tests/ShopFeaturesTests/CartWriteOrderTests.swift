import TestWaits
import Testing
@testable import ShopFeatures

/// The order of one session's cart writes: a checkout follows every write asked for before it, a change
/// follows the checkouts asked for before it, changes do not wait for each other, whatever order writes end in.
@MainActor
struct CartWriteOrderTests {
    /// Starts waiting for `ticket`'s turn; `started` lists the writes whose turn came, in that order.
    private func waitForTurn(_ order: CartWriteOrder, _ ticket: CartWriteOrder.Ticket, named name: String, into started: Started) {
        Task { @MainActor in
            await order.turn(of: ticket)
            started.names.append(name)
        }
    }

    @MainActor final class Started {
        var names: [String] = []
    }

    @Test func changesDoNotWaitForEachOtherNorForLaterCheckouts() async {
        let order = CartWriteOrder()
        let first = order.change(), second = order.change()
        _ = order.checkout()
        #expect(await order.turn(of: first) == false)
        #expect(await order.turn(of: second) == false)
    }

    @Test func aCheckoutWaitsForEveryEarlierWriteWhicheverEndsFirst() async {
        let order = CartWriteOrder()
        let first = order.change(), second = order.change()
        let checkout = order.checkout()
        let started = Started()
        waitForTurn(order, checkout, named: "checkout", into: started)
        await settle { order.checkoutsWaiting == 1 }
        order.end(second)
        await Task.yield()
        #expect(started.names.isEmpty)
        #expect(order.checkoutsWaiting == 1)
        order.end(first)
        await settle { started.names == ["checkout"] }
        #expect(order.checkoutsWaiting == 0)
    }

    @Test func aChangeWaitsForAnEarlierCheckoutOnly() async {
        let order = CartWriteOrder()
        let before = order.change()
        let checkout = order.checkout()
        let after = order.change(), later = order.change()
        let started = Started()
        waitForTurn(order, after, named: "after", into: started)
        waitForTurn(order, later, named: "later", into: started)
        await settle { order.changesWaiting == 2 }
        order.end(before)  // Not what the changes wait for.
        #expect(order.changesWaiting == 2)
        await Task.yield()
        #expect(started.names.isEmpty)
        #expect(await order.turn(of: checkout) == false)  // Its turn: nothing before it is under way.
        order.end(checkout)
        await settle { started.names.count == 2 }
        #expect(Set(started.names) == ["after", "later"])
        #expect(order.changesWaiting == 0)
    }

    @Test func aChangeAfterTwoCheckoutsWaitsForBoth() async {
        let order = CartWriteOrder()
        let first = order.checkout(), second = order.checkout()
        let change = order.change()
        let started = Started()
        waitForTurn(order, change, named: "change", into: started)
        await settle { order.changesWaiting == 1 }
        order.end(first)
        #expect(order.changesWaiting == 1)  // The second checkout is still under way.
        order.end(second)
        await settle { started.names == ["change"] }
    }

    @Test func aSecondCheckoutWaitsForTheFirstAndEndingTwiceChangesNothing() async {
        let order = CartWriteOrder()
        let first = order.checkout(), second = order.checkout()
        let started = Started()
        waitForTurn(order, second, named: "second", into: started)
        await settle { order.checkoutsWaiting == 1 }
        order.end(second)  // Ending a write that has not started is allowed (cancelled): it no longer counts.
        order.end(second)
        let change = order.change()
        waitForTurn(order, change, named: "change", into: started)
        await settle { order.changesWaiting == 1 }  // It follows the first checkout, still under way.
        order.end(first)
        await settle { started.names.count == 2 }
        #expect(Set(started.names) == ["second", "change"])
    }
}
