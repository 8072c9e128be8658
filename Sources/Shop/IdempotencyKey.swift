/// A client's key for one stored change, so that a retry of the same request never applies it twice.
///
/// The binding sets ``current`` around an action that carries an `idempotencyKey`; the store reads it
/// inside the transaction that stores the change and records the key there, with the request's
/// ``fingerprint`` and the change's outcome. A retry with the same key and fingerprint (in this server,
/// another one, or after a restart, within ``retention``) is answered from the record instead of applied;
/// the same key with another fingerprint is refused (`idempotencyKeyReused`).
public struct IdempotencyKey: Hashable, Sendable {
    /// The longest key accepted, in characters.
    public static let maximumLength = 128
    /// How long keys are remembered.
    public static let retention = Duration.seconds(24 * 60 * 60)

    /// The client's key.
    public var key: String
    /// What the request was (method and params), so that a key reused for another request is caught.
    public var fingerprint: String

    /// A key for a request.
    public init(key: String, fingerprint: String) {
        self.key = key
        self.fingerprint = fingerprint
    }

    /// The key of the action running in this task, if it has one.
    @TaskLocal public static var current: IdempotencyKey?
}

/// What a stored change keyed by an ``IdempotencyKey`` produced, as recorded with the key: enough to answer
/// a retry without applying the change again (e.g. `["orderId": "o-000012"]`).
public typealias IdempotentOutcome = [String: String]

/// Looks up keys recorded with earlier changes.
public protocol IdempotencyService: Sendable {
    /// The record of `key`, if a change was stored with it within the retention time.
    /// - Returns: the fingerprint of the request that used it, and its outcome.
    func record(of key: String) async throws -> (fingerprint: String, outcome: IdempotentOutcome)?

    /// Returns once this server has published every change stored so far (its change feed caught up with the
    /// log's head). A keyed change whose key another server stored while it ran is answered as a replay from
    /// inside its own write, and that change may not be shown here yet: its answer waits for this.
    func publishStoredChanges() async
}
