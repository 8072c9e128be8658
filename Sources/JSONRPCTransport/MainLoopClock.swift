import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A continuous clock whose sleeps end on the main thread's loop: while a ``StdioTransport`` runs, a sleep is
/// a deadline in the loop's own list, and the loop is woken for the nearest one; otherwise (tests, tools, the
/// loop ended) it is `ContinuousClock`'s sleep.
///
/// Why: `ContinuousClock`'s sleep is a libdispatch timer, which its own thread fires and hands to the task's
/// executor, waking the main thread through a descriptor: for the change feed's poll, 50 times a second for an
/// idle server, ~5 context switches a round. A deadline of the loop's costs the one wake-up of its `poll`, and a
/// task that prefers ``MainQueueTaskExecutor`` runs in the rounds that follow (a plain main-actor task, by way
/// of the main dispatch queue, after the next poll). Sleeps started on other threads (the analytics window,
/// injected latency) are added by a job of the main thread, so they end when the main thread is free.
///
/// Instants are `ContinuousClock`'s, so the two can be mixed. Each wait is armed as a duration on the
/// monotonic clock, which stops while the system is suspended: across a suspension a sleep ends late by
/// the time suspended.
///
/// ```swift
/// _ = feed.follow(every: .milliseconds(20), clock: MainLoopClock(), taskExecutor: MainQueueTaskExecutor.shared)
/// ```
public struct MainLoopClock: Clock {
    public typealias Instant = ContinuousClock.Instant
    public typealias Duration = Swift.Duration

    /// The clock (it has no state of its own).
    public init() {}

    /// Now, on `ContinuousClock`.
    public var now: Instant { ContinuousClock.now }

    /// `ContinuousClock`'s resolution (the loop's deadlines are whole nanoseconds).
    public var minimumResolution: Duration { ContinuousClock().minimumResolution }

    /// Returns at `deadline` or later; throws `CancellationError` as soon as the task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        guard MainLoopTimers.aLoopRuns.load(ordering: .acquiring) else {
            return try await ContinuousClock().sleep(until: deadline, tolerance: tolerance)
        }
        let timer = LoopTimer()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard timer.start(continuation) else { return }  // cancelled already
                MainQueue.async {
                    MainActor.assumeIsolated { MainLoopTimers.shared.add(timer, at: deadline) }
                }
            }
        } onCancel: {
            timer.fire(CancellationError())
        }
    }
}

/// One sleep of ``MainLoopClock``: its continuation, resumed once, by the deadline or by cancellation.
final class LoopTimer: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Void, any Error>?
    private var isDone = false

    /// Whether the sleep ended (its deadline came or its task was cancelled).
    var hasFired: Bool {
        lock.lock()
        defer { lock.unlock() }
        return isDone
    }

    /// Keeps `continuation` until the timer fires; returns false (and resumes it at once) when it fired
    /// already (the task was cancelled before it slept).
    func start(_ continuation: CheckedContinuation<Void, any Error>) -> Bool {
        lock.lock()
        guard !isDone else {
            lock.unlock()
            continuation.resume(throwing: CancellationError())
            return false
        }
        self.continuation = continuation
        lock.unlock()
        return true
    }

    /// Ends the sleep, with `error` (cancellation) or without; only the first call counts.
    func fire(_ error: (any Error)? = nil) {
        lock.lock()
        let waiting = continuation
        let first = !isDone
        isDone = true
        continuation = nil
        lock.unlock()
        guard first, let waiting else { return }
        if let error { waiting.resume(throwing: error) } else { waiting.resume() }
    }
}

/// The deadlines of ``MainLoopClock``'s sleeps, kept on the main thread: the loop wakes for the nearest and
/// fires those due after each `poll`. Outside a running loop each one is a libdispatch timer.
///
/// Deadlines are nanoseconds on the monotonic clock (``monotonicNanoseconds()``), converted once when a sleep is
/// added: the loop reads and compares them at every wait, and `ContinuousClock.Instant`, a resilient type of
/// the standard library, is copied and compared through its witness tables (~1 400 instructions a wait, ~5 %
/// of a `ping`, measured with callgrind).
@MainActor
final class MainLoopTimers {
    /// The main thread's list.
    static let shared = MainLoopTimers()

    /// Whether the shared list is taken over by a running loop: read by ``MainLoopClock`` from any thread.
    nonisolated static let aLoopRuns = Atomic(false)

    /// A sleep waiting in the heap.
    private struct Entry {
        var deadline: Int64
        var order: UInt64
        var timer: LoopTimer
    }

    /// Whether a loop fires the deadlines (between ``takeOver()`` and ``giveBack()``).
    private(set) var isTakenOver = false
    /// A binary min-heap by deadline, then by order of arrival.
    private var heap: [Entry] = []
    private var arrivals: UInt64 = 0
    /// The heap's size at which the sleeps cancelled before their deadline (a session's expiry, hours away,
    /// cancelled at sign-out) are taken out: whenever it has doubled since the last purge.
    private var nextPurgeAt = 64

    /// The sleeps waiting, those cancelled and not yet taken out included.
    var count: Int { heap.count }

    /// An empty list (the loop's is ``shared``; tests make their own).
    init() {}

    /// Now on the monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds: the clock of the deadlines.
    nonisolated static func monotonicNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Nanoseconds from now to `deadline` on `ContinuousClock`: 0 when it has passed, at most a year.
    nonisolated static func nanoseconds(until deadline: ContinuousClock.Instant) -> Int64 {
        let (seconds, attoseconds) = ContinuousClock.now.duration(to: deadline).components
        return seconds < 0 ? 0 : min(seconds, 31_536_000) * 1_000_000_000 + max(0, attoseconds / 1_000_000_000)
    }

    /// Fires `timer` at `deadline`: by the loop while one runs, else by libdispatch.
    func add(_ timer: LoopTimer, at deadline: ContinuousClock.Instant) {
        add(timer, atNanoseconds: Self.monotonicNanoseconds() + Self.nanoseconds(until: deadline))
    }

    /// Fires `timer` when the monotonic clock reads `deadline` (nanoseconds).
    func add(_ timer: LoopTimer, atNanoseconds deadline: Int64) {
        guard isTakenOver else {
            Self.fireOutsideTheLoop(timer, at: deadline)
            return
        }
        arrivals += 1
        heap.append(Entry(deadline: deadline, order: arrivals, timer: timer))
        siftUp(heap.count - 1)
        if heap.count >= nextPurgeAt { purgeCancelled() }
    }

    /// The nearest deadline of a sleep still waiting (monotonic nanoseconds), nil when none waits. Sleeps
    /// cancelled meanwhile are taken out first, so that they do not wake the loop.
    var nextDeadline: Int64? {
        while !heap.isEmpty, heap[0].timer.hasFired { removeFirst() }
        return heap.isEmpty ? nil : heap[0].deadline
    }

    /// Called by the loop when it starts: deadlines added from now on are its to fire.
    func takeOver() {
        isTakenOver = true
        if self === Self.shared { Self.aLoopRuns.store(true, ordering: .releasing) }
    }

    /// Called by the loop when it ends: the deadlines left are handed to libdispatch.
    func giveBack() {
        isTakenOver = false
        if self === Self.shared { Self.aLoopRuns.store(false, ordering: .releasing) }
        let left = heap.filter { !$0.timer.hasFired }
        heap = []
        for entry in left { Self.fireOutsideTheLoop(entry.timer, at: entry.deadline) }
    }

    /// Fires the timers whose deadline has passed, nearest first (the clock is read only when a sleep waits).
    /// Returns how many fired.
    @discardableResult
    func fireDue() -> Int {
        heap.isEmpty ? 0 : fireDue(now: Self.monotonicNanoseconds())
    }

    /// Fires the timers whose deadline is `now` (monotonic nanoseconds) or earlier, nearest first. Returns how
    /// many fired.
    @discardableResult
    func fireDue(now: Int64) -> Int {
        var fired = 0
        while !heap.isEmpty, heap[0].deadline <= now {
            let timer = heap[0].timer
            removeFirst()
            timer.fire()
            fired += 1
        }
        return fired
    }

    private static func fireOutsideTheLoop(_ timer: LoopTimer, at deadline: Int64) {
        let nanoseconds = max(0, deadline - monotonicNanoseconds())
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { timer.fire() }
    }

    private func purgeCancelled() {
        heap.removeAll { $0.timer.hasFired }
        heap.sort { ($0.deadline, $0.order) < ($1.deadline, $1.order) }  // a sorted array is a heap
        nextPurgeAt = max(64, heap.count * 2)
    }

    private func precedes(_ a: Int, _ b: Int) -> Bool {
        heap[a].deadline < heap[b].deadline || (heap[a].deadline == heap[b].deadline && heap[a].order < heap[b].order)
    }

    private func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(child, parent) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func removeFirst() {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, precedes(left, smallest) { smallest = left }
            if right < heap.count, precedes(right, smallest) { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
