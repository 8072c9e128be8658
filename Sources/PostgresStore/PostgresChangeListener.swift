import Logging
import PostgresNIO
import Shop
import ShopStore

/// Wakes a `ChangeFeed` when a server commits to the database: `LISTEN` on a connection of its own (a pooled
/// connection would be handed to other work), re-established after a drop.
///
/// A notification only says "the log moved" (its payload, the entry's number, lets the feed skip entries it
/// published itself); the feed then reads the log past its position. Whenever the connection is (re)made,
/// the feed catches up once after `LISTEN` took effect, so what was committed while nobody listened is read
/// then: a dropped connection or a lost notification delays a change, never loses it.
enum PostgresChangeListener {
    /// The first wait before reconnecting; doubled after each failed attempt up to ``maximumDelay``.
    static let firstDelay = Duration.milliseconds(50)
    /// The longest wait between attempts to reconnect.
    static let maximumDelay = Duration.seconds(2)
    /// How often the feed also reads the log's head, whatever the listener heard.
    static let safetyPollInterval = Duration.seconds(1)
    /// How long after skipping the notification of an own entry the listener checks that it was published.
    static let recheckDelay = Duration.milliseconds(100)

    /// Starts listening for `feed`; the task ends when cancelled or when the feed is released.
    @MainActor
    static func start(url: PostgresURL, feed: ChangeFeed, ownEntries: OwnEntries, logger: Logger) -> Task<Void, Never> {
        Task { @MainActor [weak feed] in
            let recheck = OwnEntryRecheck { [weak feed] through in
                if let feed, feed.position < through { await feed.catchUp() }
            }
            var delay = firstDelay
            var attempt = 0
            while !Task.isCancelled, feed != nil {
                attempt += 1
                do {
                    let connection = try await PostgresConnection.connect(
                        configuration: try url.connectionConfiguration(), id: attempt, logger: logger)
                    do {
                        try await connection.listen(on: PostgresChangeLog.channel) { notifications in
                            if attempt > 1 { logger.notice("listening to the change log again", metadata: ["attempt": "\(attempt)"]) }
                            delay = firstDelay
                            await feed?.catchUp()
                            for try await notification in notifications {
                                guard let feed else { return }
                                if let seq = Int64(notification.payload) {
                                    // Taken first, so that an own entry already published is forgotten too.
                                    let isOwn = ownEntries.take(seq)
                                    if seq <= feed.position { continue }
                                    // This process's own entry: its writer publishes it (see `OwnEntries`).
                                    if isOwn {
                                        recheck.note(seq)
                                        continue
                                    }
                                }
                                // In a task of its own: a catch-up waits for the database (up to its deadline when
                                // that is gone), and the loop must go on reading, to notice a dropped connection
                                // at once. The feed runs one catch-up at a time and folds the requests made meanwhile.
                                Task { @MainActor in await feed.catchUp() }
                            }
                        }
                    } catch {
                        try? await connection.close()
                        throw error
                    }
                    try? await connection.close()
                    if !Task.isCancelled { logger.warning("the change log's listening connection ended; reconnecting") }
                } catch {
                    if Task.isCancelled { return }
                    logger.warning("the change log's listening connection failed; reconnecting", metadata: [
                        "error": "\(String(reflecting: error))", "retryIn": "\(delay)",
                    ])
                }
                do { try await Task.sleep(for: delay) } catch { return }
                delay = min(delay * 2, maximumDelay)
            }
        }
    }
}

/// The check that this process's own entries, whose notifications the listener skips, were published by their
/// writers: each at least `delay` after its notification, with one timer at a time for all of them (a timer per
/// entry woke a thread of the global pool and then the main thread, for every write).
@MainActor
final class OwnEntryRecheck {
    private let delay: Duration
    private let clock: any Clock<Duration>
    private let check: @MainActor (_ through: Int64) async -> Void
    /// The newest own entry noted and not yet checked; 0 when none is.
    private var pending: Int64 = 0
    /// Whether a check waits for its delay.
    private var isScheduled = false

    /// A recheck that calls `check` with the newest entry noted before its wait began.
    /// - Parameters:
    ///   - delay: how long after an entry's notice it is checked, at least.
    ///   - clock: the clock of the wait (a test's `TestClock`).
    ///   - check: makes sure every entry up to its argument is published (the listener's: the feed catches up
    ///     unless its position is there already).
    init(
        delay: Duration = PostgresChangeListener.recheckDelay, clock: any Clock<Duration> = ContinuousClock(),
        check: @escaping @MainActor (_ through: Int64) async -> Void
    ) {
        self.delay = delay
        self.clock = clock
        self.check = check
    }

    /// Notes the own entry `seq`, checked after the delay (with those noted before that wait starts).
    func note(_ seq: Int64) {
        pending = max(pending, seq)
        if !isScheduled { schedule() }
    }

    /// Waits the delay, then checks the entries noted before the wait; waits again for those noted meanwhile
    /// (a note made while a check runs starts its own wait at once).
    private func schedule() {
        isScheduled = true
        let target = pending
        pending = 0
        Task { @MainActor [weak self, clock, delay] in
            try? await clock.sleep(for: delay)
            guard let self else { return }
            self.isScheduled = false
            await self.check(target)
            if self.pending > 0, !self.isScheduled { self.schedule() }
        }
    }
}
