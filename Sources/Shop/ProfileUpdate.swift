import Foundation

/// A change to an account's profile, as a profile screen saves it: each member that is not `nil` replaces
/// the stored value, and the others keep what is stored when the change is made.
///
/// A screen sends only the fields its user changed, so that saving a new name never puts back a bio that
/// another screen (or another server) saved meanwhile.
public struct ProfileUpdate: Equatable, Sendable {
    /// The new display name (trimmed when stored).
    public var name: String?
    /// The new sign-in address (normalized when stored, see ``AccountRules/normalizedEmail(_:)``).
    public var email: String?
    /// The new bio, at most ``AccountRules/bioMaximum`` characters.
    public var bio: String?
    /// Whether notifications are wanted from now on.
    public var notificationsEnabled: Bool?

    /// Creates an update; members left `nil` keep the account's values.
    public init(name: String? = nil, email: String? = nil, bio: String? = nil, notificationsEnabled: Bool? = nil) {
        self.name = name
        self.email = email
        self.bio = bio
        self.notificationsEnabled = notificationsEnabled
    }

    /// Whether the update sets nothing (every member is `nil`).
    public var isEmpty: Bool { self == ProfileUpdate() }

    /// The update as stored: the name trimmed, the email normalized (``AccountRules/normalizedEmail(_:)``).
    public var normalized: ProfileUpdate {
        ProfileUpdate(
            name: name?.trimmingCharacters(in: .whitespacesAndNewlines), email: email.map(AccountRules.normalizedEmail),
            bio: bio, notificationsEnabled: notificationsEnabled)
    }
}
