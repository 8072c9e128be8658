import JSON
import Synchronization
import Testing
@testable import JSONRPC

/// ``Outbox`` and its ``OutputBarrier``: bytes enqueued after a generation the barrier has not passed are held,
/// in order, until it passes it.
@MainActor @Suite struct OutboxBarrierTests {
    /// A barrier the test moves by hand.
    final class ManualBarrier: OutputBarrier {
        private let state = Mutex((required: UInt64(0), reached: UInt64(0)))
        var required: UInt64 { state.withLock { $0.required } }
        var reached: UInt64 { state.withLock { $0.reached } }
        func commit() { state.withLock { $0.required += 1 } }
        func reach(_ generation: UInt64) { state.withLock { $0.reached = generation } }
        func pass() { state.withLock { $0.reached = $0.required } }
    }

    static func line(_ text: String) -> [UInt8] { Array("\"\(text)\"\n".utf8) }

    /// An outbox whose bytes wait for a barrier the test moves.
    static func outboxWithBarrier() -> (Outbox, ManualBarrier) {
        let outbox = Outbox()
        let barrier = ManualBarrier()
        outbox.barrier = barrier
        return (outbox, barrier)
    }

    @Test func withoutABarrierEverythingIsWritable() {
        let outbox = Outbox()
        outbox.enqueue("a")
        #expect(outbox.writableCount == outbox.pending.count)
    }

    @Test func bytesEnqueuedBeforeACommitGoAndThoseAfterItWaitForItsGeneration() {
        let (outbox, barrier) = Self.outboxWithBarrier()
        outbox.enqueue("before")
        barrier.commit()
        outbox.enqueue("after1")
        barrier.commit()
        outbox.enqueue("after2")
        #expect(outbox.writableCount == Self.line("before").count)
        barrier.reach(1)
        #expect(outbox.writableCount == (Self.line("before") + Self.line("after1")).count)
        outbox.consume(Self.line("before").count)
        #expect(outbox.writableCount == Self.line("after1").count)
        barrier.reach(2)
        #expect(outbox.writableCount == outbox.pending.count)
        #expect(outbox.pending == Self.line("after1") + Self.line("after2"))
    }

    @Test func bytesEnqueuedOnceTheBarrierPassedStillWaitBehindHeldOnes() {
        let (outbox, barrier) = Self.outboxWithBarrier()
        barrier.commit()
        outbox.enqueue("held")
        barrier.commit()
        barrier.reach(1)  // the first generation passed, the second not: bytes now wait for the second
        outbox.enqueue("later")
        #expect(outbox.writableCount == Self.line("held").count)
        barrier.pass()
        #expect(outbox.writableCount == outbox.pending.count)
        outbox.consume(outbox.writableCount)
        #expect(outbox.pending.isEmpty)
        outbox.enqueue("free")
        #expect(outbox.writableCount == Self.line("free").count)
    }

    @Test func aPartialWriteKeepsWhereTheHeldBytesStart() {
        let (outbox, barrier) = Self.outboxWithBarrier()
        outbox.enqueue("abcdef")
        barrier.commit()
        outbox.enqueue("held")
        outbox.consume(3)
        #expect(outbox.writableCount == Self.line("abcdef").count - 3)
        outbox.consume(outbox.writableCount)
        #expect(outbox.writableCount == 0)
        #expect(outbox.pending == Self.line("held"))
    }
}
