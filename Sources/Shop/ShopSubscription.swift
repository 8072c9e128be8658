import Foundation

/// A subscription to ``ShopEvents``. It ends when cancelled or released.
public final class ShopSubscription: Sendable {
    private let onCancel: Locked<(@Sendable () -> Void)?>

    init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Locked(onCancel)
    }

    /// Stops delivery. Calling it again does nothing.
    public func cancel() {
        let action = onCancel.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }

    deinit {
        cancel()
    }
}
