/// What an ``Outbox``'s bytes may have to wait for before they are written: numbered generations that are
/// passed in order, such as a database's commits becoming durable. Bytes enqueued while ``required`` is past
/// ``reached`` are held until ``reached`` catches up with what ``required`` was then; bytes enqueued after
/// them wait at least as long, so the output keeps its order.
///
/// Read on the main thread at every enqueue and write: both must be cheap (an atomic load).
public protocol OutputBarrier: AnyObject, Sendable {
    /// The generation that bytes enqueued now must wait for.
    var required: UInt64 { get }
    /// The last generation passed: bytes that wait for it, or for an earlier one, may be written.
    var reached: UInt64 { get }
    /// Passes every generation so far (``reached`` then at least what ``required`` was), blocking as long as
    /// that takes: the transport calls it when it would otherwise wait with bytes held.
    func pass()
}
