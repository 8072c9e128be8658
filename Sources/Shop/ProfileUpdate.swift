/// The editable part of an account, as a profile screen saves it.
public struct ProfileUpdate: Equatable, Sendable {
    /// The display name.
    public var name: String
    /// The sign-in address.
    public var email: String
    /// A few words, at most ``AccountRules/bioMaximum`` characters.
    public var bio: String
    /// Whether notifications are wanted.
    public var notificationsEnabled: Bool

    /// Creates an update.
    public init(name: String, email: String, bio: String, notificationsEnabled: Bool) {
        self.name = name
        self.email = email
        self.bio = bio
        self.notificationsEnabled = notificationsEnabled
    }
}
