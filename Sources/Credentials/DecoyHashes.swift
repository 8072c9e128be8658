import Synchronization

/// The hashes `PasswordHasher.verifyWithoutAccount(_:)` verifies against: one per cost, of a random
/// password nobody knows, made on first use and kept for the life of the process.
enum DecoyHashes {
    /// The hashes made so far, by cost.
    private static let hashes = Mutex<[PasswordHasher.Cost: String]>([:])

    /// The decoy hash for `cost`, made now if there is none yet; nil when hashing fails (out of memory, a
    /// cost libsodium refuses).
    static func hash(for cost: PasswordHasher.Cost) -> String? {
        if let hash = hashes.withLock({ $0[cost] }) { return hash }
        // Hashed outside the lock: a first call for one cost does not hold up calls for another. Two first
        // calls for the same cost may both hash; the first to finish is kept.
        guard let made = try? PasswordHasher(cost: cost).hash(SecureRandom.identifier(bytes: 32)) else { return nil }
        return hashes.withLock { hashes in
            if let hash = hashes[cost] { return hash }
            hashes[cost] = made
            return made
        }
    }
}
