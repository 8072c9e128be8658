/// Why a password could not be hashed.
///
/// Its message never contains the password.
public struct CredentialsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable name for what went wrong, for callers that turn it into their own errors.
    public struct Code: RawRepresentable, Hashable, Sendable {
        /// The code's name, e.g. `"passwordTooLong"`.
        public let rawValue: String

        /// A code with this name.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The password is the empty string.
        public static let emptyPassword = Code(rawValue: "emptyPassword")
        /// The password is longer than `PasswordHasher.maximumPasswordBytes` UTF-8 bytes.
        public static let passwordTooLong = Code(rawValue: "passwordTooLong")
        /// libsodium refused to hash: it could not allocate the cost's memory, or the cost is out of the
        /// range it accepts.
        public static let hashingFailed = Code(rawValue: "hashingFailed")
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for logs and developers (not for end users).
    public let message: String

    /// An error with this code and message.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// The password is the empty string.
    public static let emptyPassword = CredentialsError(code: .emptyPassword, message: "the password is empty")

    /// The password is longer than `PasswordHasher.maximumPasswordBytes` UTF-8 bytes.
    public static let passwordTooLong = CredentialsError(
        code: .passwordTooLong,
        message: "the password is longer than \(PasswordHasher.maximumPasswordBytes) UTF-8 bytes"
    )

    /// libsodium's crypto_pwhash_str_alg failed (out of memory, or a cost outside libsodium's limits).
    public static let hashingFailed = CredentialsError(
        code: .hashingFailed,
        message: "crypto_pwhash_str_alg failed (out of memory, or a cost outside libsodium's limits)"
    )

    /// The code and the message, e.g. `passwordTooLong: the password is longer than 1024 UTF-8 bytes`.
    public var description: String {
        "\(code.rawValue): \(message)"
    }
}
