import Synchronization

/// The hashes `PasswordHasher.verifyWithoutAccount(_:)` verifies against: one per cost, of a random
/// password nobody knows, kept for the life of the process.
///
/// The standard cost's is built in (a hash of 32 random bytes that were thrown away, made with libsodium at
/// this cost): were it made on first use, the first unknown-email sign-in of every new server process
/// would take one hash longer than a wrong password, and a client that starts a server per connection (the
/// web bridge) could tell unknown emails that way. Other costs' are made on first use.
enum DecoyHashes {
    /// The standard cost's decoy (Argon2id, m=64 MiB, t=2, p=1).
    static let standard = "$argon2id$v=19$m=65536,t=2,p=1$BqFfqy6yjQLX/QFVP2F3+w$Xew44p7ZAgd3L7PC/CgYemslBeItNJTJ/f8jVfvIHms"

    /// The hashes known so far, by cost.
    private static let hashes = Mutex<[PasswordHasher.Cost: String]>([.standard: standard])

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
