import Foundation
import Shop

/// The lock on an email's sign-ins after repeated failures, computed from the times of its recent failed
/// attempts: the same rule whichever store counts them (``AccountRules`` holds the numbers).
package enum SignInLock {
    /// The oldest failure time, in stored milliseconds, that still counts at `now`: earlier failures are
    /// neither counted nor kept.
    package static func windowStart(now: Date) -> Int64 {
        StoredDate.milliseconds(now.addingTimeInterval(-AccountRules.failureWindow))
    }

    /// Until when sign-ins are refused, or nil when they are not.
    /// - Parameters:
    ///   - failures: The times (stored milliseconds) of the email's failures after ``windowStart(now:)``,
    ///     oldest first.
    ///   - now: The time of the attempt.
    static func lockedUntil(failures: [Int64], now: Date) -> Date? {
        guard failures.count >= AccountRules.failuresBeforeLock, let last = failures.last else { return nil }
        // Rounded up to a whole second: the time is sent without fractions, and a client that retries at
        // the time it was given must not be refused again.
        let exact = StoredDate.date(last).addingTimeInterval(AccountRules.lockDuration(afterFailures: failures.count))
        let until = Date(timeIntervalSince1970: exact.timeIntervalSince1970.rounded(.up))
        return until > now ? until : nil
    }

    /// The refusal of a sign-in attempted at `now` while sign-ins are locked until `until`.
    static func error(until: Date, now: Date) -> ShopError {
        ShopError.signInLocked(
            retryAfter: max(1, Int(until.timeIntervalSince(now).rounded(.up))),
            lockedUntil: until.formatted(.iso8601))
    }

    /// Throws the refusal when `failures` lock sign-ins at `now` (see ``lockedUntil(failures:now:)``).
    /// - Throws: ``ShopError`` `signInLocked`.
    package static func check(failures: [Int64], now: Date) throws {
        if let until = lockedUntil(failures: failures, now: now) { throw error(until: until, now: now) }
    }
}
