import Synchronization

/// A clock whose sleeps end at once, so that the ViewModels' debounces and timers run inside one fuzz
/// iteration instead of holding it for hundreds of milliseconds.
///
/// A sleep still behaves like one in the ways the ViewModels can tell: it throws `CancellationError` when
/// its task is cancelled (before or after it yields), it lets other main-actor jobs run (a search typed
/// in the same turn still supersedes the one before it), and `now` moves to the deadline.
public final class ImmediateClock: Clock, Sendable {
    /// A point on this clock: an offset from its start.
    public struct Instant: InstantProtocol {
        /// Time since the clock's start.
        public var offset: Duration

        /// This instant moved by `duration`.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }

        /// The duration from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }

        /// Whether `lhs` comes before `rhs`.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let current = Mutex(Instant(offset: .zero))

    /// A clock at its start.
    public init() {}

    /// The current instant; it moves only when a sleep ends.
    public var now: Instant { current.withLock { $0 } }

    /// No resolution limit.
    public var minimumResolution: Duration { .zero }

    /// Moves `now` to `deadline` (if later) after yielding once.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        await Task.yield()
        try Task.checkCancellation()
        current.withLock { now in now = max(now, deadline) }
    }
}
