extension Clock where Duration == Swift.Duration {
    /// A sleep that ends `delay` after this call, however late the task that sleeps first runs: for a
    /// delay counted from a user's change (a field checked 300 ms after its last edit), not from when a
    /// busy machine got round to starting the check.
    func sleep(endingAfter delay: Duration) -> @Sendable () async throws -> Void {
        let deadline = now.advanced(by: delay)
        return { try await self.sleep(until: deadline, tolerance: nil) }
    }
}
