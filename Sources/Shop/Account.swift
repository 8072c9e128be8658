import Foundation

/// A registered customer: who they are and what they chose to receive. Never holds credentials.
public struct Account: Codable, Equatable, Sendable, Identifiable {
    /// Assigned at registration, never reused.
    public var id: Int64
    /// The address they sign in with, unique regardless of case.
    public var email: String
    /// Their display name (the part of the email before `@` until they change it).
    public var name: String
    /// A few words about them, at most ``AccountRules/bioMaximum`` characters.
    public var bio: String
    /// Whether they want notifications.
    public var notificationsEnabled: Bool
    /// When they registered.
    public var createdAt: Date

    /// Creates an account value.
    public init(id: Int64, email: String, name: String, bio: String, notificationsEnabled: Bool, createdAt: Date) {
        self.id = id
        self.email = email
        self.name = name
        self.bio = bio
        self.notificationsEnabled = notificationsEnabled
        self.createdAt = createdAt
    }

    /// The shopper whose data is this account's.
    public var shopper: Shopper { .account(id) }
}
