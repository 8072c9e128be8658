import CSodium

extension PasswordHasher {
    /// How much work one Argon2id hash takes: passes over memory (`operations`, Argon2's t) and memory
    /// (`memoryBytes`, Argon2's m in bytes). Parallelism (Argon2's p) is always 1 in libsodium.
    ///
    /// Why Argon2id: it is memory-hard, so an attacker with a stolen database pays for memory, not only
    /// arithmetic, per guess (which takes away most of the advantage of GPUs and ASICs over our CPU); its
    /// first pass is data-independent, which resists cache-timing side channels; it won the Password
    /// Hashing Competition and is the first choice of RFC 9106 and of OWASP's Password Storage Cheat Sheet.
    ///
    /// Why these numbers: `standard` is libsodium's INTERACTIVE limits for Argon2id, t=2 and 64 MiB, made
    /// for logins that a person waits for. That is above OWASP's minimum for Argon2id (19 MiB with t=2,
    /// p=1). Each hash holds its 64 MiB for its whole duration, so the memory a server needs grows with the
    /// number of hashes it runs at once: bound that number. To raise the cost later, change `standard`;
    /// `PasswordHasher.needsRehash(_:)` then reports the old hashes, and a sign-in that verified the
    /// password can store a new hash of it.
    public struct Cost: Sendable, Hashable {
        /// Argon2's t: the number of passes over the memory (libsodium's opslimit).
        public let operations: UInt64
        /// Argon2's m, in bytes (libsodium's memlimit); libsodium uses it in whole KiB.
        public let memoryBytes: Int

        /// A cost of `operations` passes over `memoryBytes` bytes. libsodium accepts, for Argon2id, at
        /// least 1 pass and 8 KiB; hashing with a cost outside its limits throws
        /// `CredentialsError.hashingFailed`.
        public init(operations: UInt64, memoryBytes: Int) {
            self.operations = operations
            self.memoryBytes = memoryBytes
        }

        /// The cost for real passwords: Argon2id with t=2 and 64 MiB
        /// (crypto_pwhash_argon2id_OPSLIMIT_INTERACTIVE and crypto_pwhash_argon2id_MEMLIMIT_INTERACTIVE).
        public static let standard = Cost(
            operations: cs_pwhash_argon2id_opslimit_interactive(),
            memoryBytes: cs_pwhash_argon2id_memlimit_interactive()
        )

        /// The least work libsodium accepts: t=1 and 8 KiB (crypto_pwhash_argon2id_OPSLIMIT_MIN and
        /// crypto_pwhash_argon2id_MEMLIMIT_MIN). For unit tests only, so that they run fast: it protects
        /// nothing, never use it for real passwords.
        public static let minimum = Cost(
            operations: cs_pwhash_argon2id_opslimit_min(),
            memoryBytes: cs_pwhash_argon2id_memlimit_min()
        )
    }
}
