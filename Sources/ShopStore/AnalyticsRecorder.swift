import Foundation
import Logging
import Shop

/// What became of the analytics events a service recorded so far.
public struct AnalyticsCounters: Equatable, Sendable {
    /// Events taken into the buffer.
    public var recorded = 0
    /// Events refused because the buffer was full.
    public var dropped = 0
    /// Events stored.
    public var stored = 0
    /// Events whose write failed.
    public var failed = 0

    /// Counters with these values (all 0 by default).
    public init(recorded: Int = 0, dropped: Int = 0, stored: Int = 0, failed: Int = 0) {
        self.recorded = recorded
        self.dropped = dropped
        self.stored = stored
        self.failed = failed
    }
}

/// The batching recorder behind every store's analytics service: ``record(_:)`` appends to a bounded
/// in-memory buffer under a lock and wakes a writer task, which hands what has gathered to the store's
/// ``Store`` closure, one call (one transaction) per batch, off the caller's path. The store only says how
/// a batch is written; the rest is the same for every engine.
///
/// - Recording costs the caller a lock and an append (and, when the writer is idle, resuming it): no
///   allocation beyond the buffer's growth, no I/O, no waiting. A full buffer (``capacity`` events waiting
///   while a write is slow) drops the event and counts it in ``AnalyticsCounters/dropped``.
/// - Batches: woken by a first event, the writer gathers events for the batch window (on the injected
///   clock) before it writes them; a flush, or a half-full buffer, ends the window at once. Analytics then
///   cost the database one commit a second at most, not one per action.
/// - A failed write is logged (once per run of failures) and counted in ``AnalyticsCounters/failed``; the
///   events are lost, nothing is retried and no action ever hears of it.
/// - The store is asked to delete events older than ``retention`` with its first batch and then at most
///   once per ``pruneInterval``.
///
/// The writer task holds the buffer and the store, not the recorder: releasing the recorder cancels it
/// (events still buffered then are lost; a server calls ``flush()`` before it exits).
package final class AnalyticsRecorder: Sendable {
    /// Writes one batch in one transaction, and deletes the events older than `pruneBefore` when it is given.
    package typealias Store = @Sendable (_ batch: [AnalyticsEvent], _ pruneBefore: Date?) async throws -> Void

    /// Events kept waiting for the writer by default before new ones are dropped.
    package static let defaultCapacity = 10_000
    /// How long events are kept: 7 days.
    package static let retention: TimeInterval = 7 * 24 * 60 * 60
    /// The least time between two prunes: 1 hour.
    package static let pruneInterval: TimeInterval = 60 * 60
    /// How long the writer gathers events before a write, unless flushed: 1 second.
    package static let batchWindow = Duration.seconds(1)

    /// The most events waiting for the writer.
    package let capacity: Int
    private let buffer: Locked<Buffer>
    private let writer: Task<Void, Never>

    /// A recorder with its writer task started.
    /// - Parameters:
    ///   - capacity: The most events waiting for the writer; more are dropped and counted.
    ///   - clock: The clock the batch window is timed on.
    ///   - batchWindow: How long the writer gathers events before a write (unless flushed).
    ///   - now: The current date, for pruning.
    ///   - logger: Where failed writes are reported.
    ///   - store: Writes a batch (and prunes).
    package init(
        capacity: Int, clock: any Clock<Duration>, batchWindow: Duration, now: @escaping @Sendable () -> Date, logger: Logger,
        store: @escaping Store
    ) {
        let buffer = Locked(Buffer())
        self.capacity = capacity
        self.buffer = buffer
        let window = BatchWindow(clock: clock, duration: batchWindow, earlyAt: max(1, capacity / 2))
        writer = Task.detached(priority: .utility) {
            await Self.write(buffer, to: store, window: window, now: now, logger: logger)
        }
    }

    deinit {
        writer.cancel()
    }

    /// What became of the events recorded so far.
    package var counters: AnalyticsCounters { buffer.withLock { $0.counters } }

    /// Events recorded and not yet taken by the writer.
    package var pendingCount: Int { buffer.withLock { $0.pending.count } }

    /// Takes `event` into the buffer (or drops and counts it when the buffer is full); never waits.
    package func record(_ event: AnalyticsEvent) {
        let idleWriter = buffer.withLock { buffer -> CheckedContinuation<Void, Never>? in
            guard buffer.pending.count < capacity else {
                buffer.counters.dropped += 1
                return nil
            }
            buffer.pending.append(event)
            buffer.counters.recorded += 1
            if let idle = buffer.idleWriter {
                buffer.idleWriter = nil
                return idle
            }
            // Half full: the window ends now rather than drop events.
            guard buffer.pending.count >= max(1, capacity / 2) else { return nil }
            return buffer.takeGatheringWriter()
        }
        idleWriter?.resume()
    }

    /// Returns once every event recorded before the call is stored, or its write has failed.
    package func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = buffer.withLock { buffer -> (Bool, CheckedContinuation<Void, Never>?) in
                let target = buffer.counters.recorded
                if buffer.finished >= target { return (true, nil) }
                buffer.flushWaiters.append((target, continuation))
                // The writer writes what it gathers now, not at the end of its window.
                return (false, buffer.takeGatheringWriter())
            }
            if done.0 { continuation.resume() }
            done.1?.resume()
        }
    }

    // MARK: The writer

    /// The state the callers and the writer share.
    private struct Buffer {
        /// Recorded, not yet taken by the writer.
        var pending: [AnalyticsEvent] = []
        var counters = AnalyticsCounters()
        /// Recorded events stored or failed (the first `finished` recorded events are done with).
        var finished = 0
        /// The writer, while it waits for events.
        var idleWriter: CheckedContinuation<Void, Never>?
        /// The writer, while it gathers events for a batch, with the number of its window (so that a late
        /// timer cannot end a later window).
        var gatheringWriter: (window: Int, continuation: CheckedContinuation<Void, Never>)?
        /// Windows opened so far.
        var windows = 0
        /// The sleep that ends the open window; cancelled when something else ends it first.
        var windowTimer: Task<Void, Never>?
        /// Whether the writer was cancelled.
        var isCancelled = false
        /// Callers of ``flush()``, with the count of recorded events they wait for.
        var flushWaiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)] = []

        /// Ends the writer's window, if it is gathering: the continuation to resume.
        mutating func takeGatheringWriter() -> CheckedContinuation<Void, Never>? {
            windowTimer?.cancel()
            windowTimer = nil
            defer { gatheringWriter = nil }
            return gatheringWriter?.continuation
        }
    }

    /// How long the writer gathers a batch.
    private struct BatchWindow: Sendable {
        var clock: any Clock<Duration>
        var duration: Duration
        /// Pending events that end a window early.
        var earlyAt: Int
    }

    /// The writer's loop: takes what is pending, stores it in one transaction, says so to the flushes it
    /// completes, and waits for more; returns when cancelled.
    private static func write(
        _ buffer: Locked<Buffer>, to store: Store, window: BatchWindow, now: @escaping @Sendable () -> Date, logger: Logger
    ) async {
        var lastPrune: Date?
        var failing = false
        while let batch = await nextBatch(buffer, window: window) {
            let date = now()
            let prunes = lastPrune.map { date.timeIntervalSince($0) >= pruneInterval } ?? true
            do {
                try await store(batch, prunes ? date.addingTimeInterval(-retention) : nil)
                if prunes { lastPrune = date }
                if failing {
                    failing = false
                    logger.notice("analytics events are stored again")
                }
                finish(batch.count, stored: true, in: buffer)
            } catch {
                if !failing {
                    failing = true
                    logger.warning(
                        "could not store analytics events; they are dropped until writes succeed again",
                        metadata: ["events": "\(batch.count)", "error": "\(error)"])
                }
                finish(batch.count, stored: false, in: buffer)
            }
        }
    }

    /// The pending events once there are some and their batch window has passed (taking them out of the
    /// buffer), or nil once cancelled.
    private static func nextBatch(_ buffer: Locked<Buffer>, window: BatchWindow) async -> [AnalyticsEvent]? {
        while true {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = buffer.withLock { buffer in
                        if buffer.isCancelled || !buffer.pending.isEmpty { return true }
                        buffer.idleWriter = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
                await gather(buffer, window: window)
            } onCancel: {
                let waiting = buffer.withLock { buffer in
                    buffer.isCancelled = true
                    defer { buffer.idleWriter = nil }
                    return [buffer.idleWriter, buffer.takeGatheringWriter()]
                }
                for writer in waiting { writer?.resume() }
            }
            let (batch, cancelled) = buffer.withLock { buffer -> ([AnalyticsEvent]?, Bool) in
                guard !buffer.isCancelled, !buffer.pending.isEmpty else { return (nil, buffer.isCancelled) }
                let batch = buffer.pending
                // Room for as many as this batch had, so that callers of `record` do not pay for the array's
                // growth (copying thousands of events in one append) in the next window.
                buffer.pending = []
                buffer.pending.reserveCapacity(max(256, batch.count))
                return (batch, false)
            }
            if cancelled { return nil }
            if let batch { return batch }
        }
    }

    /// Waits out the batch window that a first event opened, unless a flush, a half-full buffer or a
    /// cancellation ends it first.
    private static func gather(_ buffer: Locked<Buffer>, window: BatchWindow) async {
        guard window.duration > .zero else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let number = buffer.withLock { buffer -> Int? in
                if buffer.isCancelled || !buffer.flushWaiters.isEmpty || buffer.pending.count >= window.earlyAt { return nil }
                buffer.windows += 1
                buffer.gatheringWriter = (buffer.windows, continuation)
                return buffer.windows
            }
            guard let number else { return continuation.resume() }
            let timer = Task.detached(priority: .utility) {
                guard (try? await window.clock.sleep(for: window.duration)) != nil else { return }
                let ended = buffer.withLock { buffer -> CheckedContinuation<Void, Never>? in
                    guard buffer.gatheringWriter?.window == number else { return nil }
                    return buffer.takeGatheringWriter()
                }
                ended?.resume()
            }
            // Kept so that a window ended early (a flush, a half-full buffer, cancellation) stops its sleep;
            // one already ended stops it now.
            buffer.withLock { buffer in
                if buffer.gatheringWriter?.window == number { buffer.windowTimer = timer } else { timer.cancel() }
            }
        }
    }

    /// Counts `count` events as stored or failed, and resumes the flushes that waited for them.
    private static func finish(_ count: Int, stored: Bool, in buffer: Locked<Buffer>) {
        let completed = buffer.withLock { buffer in
            if stored { buffer.counters.stored += count } else { buffer.counters.failed += count }
            buffer.finished += count
            let finished = buffer.finished
            let completed = buffer.flushWaiters.filter { $0.target <= finished }.map(\.continuation)
            buffer.flushWaiters.removeAll { $0.target <= finished }
            return completed
        }
        for continuation in completed { continuation.resume() }
    }
}
