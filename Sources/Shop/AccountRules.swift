import Foundation

/// The rules of account fields, shared by the registration and profile screens and the account store
/// (which checks again: a client cannot skip a screen's checks).
///
/// Each check returns a message for people, or `nil` when the value is fine.
public enum AccountRules {
    /// The longest email address accepted (RFC 5321's limit on a path).
    public static let emailMaximum = 254
    /// The fewest characters a password may have.
    public static let passwordMinimum = 8
    /// The most UTF-8 bytes a password may have (hashing a longer one would only cost time).
    public static let passwordMaximumBytes = 1024
    /// The most characters a display name may have.
    public static let nameMaximum = 80
    /// The most characters a bio may have.
    public static let bioMaximum = 500

    /// An email as stored and compared: trimmed and in Unicode's composed form (NFC), so that a composed
    /// and a decomposed "é" are one address. (Uniqueness ignores ASCII case.)
    public static func normalizedEmail(_ email: String) -> String {
        email.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
    }

    /// Checks an email: `local@domain`, at most ``emailMaximum`` characters. The local part is letters,
    /// digits and `. _ % + -` (no dot first, last or twice in a row); the domain is dot-separated labels of
    /// letters, digits and inner hyphens, ending in a label of two or more letters. Narrower than RFC 5322
    /// on purpose: quotes, braces, semicolons and the like are legal there but used only by injection
    /// attempts, which are refused here as the field's error.
    public static func emailError(_ email: String) -> String? {
        let email = normalizedEmail(email)
        if email.isEmpty { return "Email is required." }
        // Lengths count Unicode scalars: a grapheme count lets "a" plus 10 000 combining marks pass as one.
        if email.unicodeScalars.count > emailMaximum { return "Email must be at most \(emailMaximum) characters." }
        let invalid = "Enter an email address such as name@example.com."
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return invalid }
        let (local, domain) = (parts[0], parts[1])
        let localSymbols: Set<Unicode.Scalar> = [".", "_", "%", "+", "-"]
        guard !local.isEmpty, local.first != ".", local.last != ".", !local.contains(".."),
              local.unicodeScalars.allSatisfy({ isLetterOrDigit($0) || localSymbols.contains($0) })
        else { return invalid }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2,
              labels.allSatisfy({ label in
                  !label.isEmpty && label.first != "-" && label.last != "-"
                      && label.unicodeScalars.allSatisfy { isLetterOrDigit($0) || $0 == "-" }
              }),
              let top = labels.last, top.count >= 2, top.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic })
        else { return invalid }
        return nil
    }

    private static func isLetterOrDigit(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || scalar.properties.numericType == .decimal
    }

    /// Checks a password: at least ``passwordMinimum`` characters with a digit, at most
    /// ``passwordMaximumBytes`` bytes.
    public static func passwordError(_ password: String) -> String? {
        if password.isEmpty { return "Password is required." }
        if password.utf8.count > passwordMaximumBytes { return "Password must be at most \(passwordMaximumBytes) bytes." }
        if password.unicodeScalars.count < passwordMinimum { return "Password must have at least \(passwordMinimum) characters." }
        if !password.contains(where: \.isNumber) { return "Password must contain a digit." }
        return nil
    }

    /// Checks the confirmation against the password.
    public static func confirmationError(_ confirmation: String, password: String) -> String? {
        confirmation == password ? nil : "Passwords do not match."
    }

    /// Checks a display name: required, at most ``nameMaximum`` characters once trimmed, no control characters.
    public static func nameError(_ name: String) -> String? {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { return "Name is required." }
        if trimmed.unicodeScalars.count > nameMaximum { return "Name must be at most \(nameMaximum) characters." }
        // Format characters (bidirectional overrides, zero-width joiners) can make one name look like another.
        if trimmed.unicodeScalars.contains(where: { [.control, .format].contains($0.properties.generalCategory) }) {
            return "Name must not contain control or format characters."
        }
        return nil
    }

    /// Checks a bio: at most ``bioMaximum`` characters; line breaks allowed, other control characters not.
    public static func bioError(_ bio: String) -> String? {
        if bio.unicodeScalars.count > bioMaximum { return "Bio must be at most \(bioMaximum) characters." }
        if bio.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" && $0 != "\t" }) {
            return "Bio must not contain control characters other than line breaks."
        }
        return nil
    }

    /// Every problem of the fields a profile update sets, keyed by field (`name`, `email`, `bio`).
    public static func errors(for update: ProfileUpdate) -> [String: String] {
        var errors: [String: String] = [:]
        errors["name"] = update.name.flatMap(nameError)
        errors["email"] = update.email.flatMap(emailError)
        errors["bio"] = update.bio.flatMap(bioError)
        return errors
    }

    /// The name a new account starts with: the part of its email before `@`, cut to ``nameMaximum``.
    public static func defaultName(forEmail email: String) -> String {
        let local = normalizedEmail(email).split(separator: "@").first.map(String.init) ?? ""
        return String(String.UnicodeScalarView(local.unicodeScalars.prefix(nameMaximum)))
    }

    /// How many failed sign-ins for one email, within ``failureWindow``, lock further attempts.
    public static let failuresBeforeLock = 5
    /// The window failed sign-ins are counted in.
    public static let failureWindow: TimeInterval = 15 * 60
    /// How long sign-ins stay refused after the `failures`-th failure within the window: 1 minute after
    /// the 5th, doubling with each further failure, at most 15 minutes. Zero below 5.
    public static func lockDuration(afterFailures failures: Int) -> TimeInterval {
        guard failures >= failuresBeforeLock else { return 0 }
        let doublings = min(failures - failuresBeforeLock, 4)
        return min(60 * pow(2, Double(doublings)), 15 * 60)
    }

    /// How long a session token works after sign-in.
    public static let sessionLifetime: TimeInterval = 30 * 24 * 60 * 60
}
