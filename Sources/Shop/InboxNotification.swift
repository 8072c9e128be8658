import Foundation

/// One notification in an account's inbox.
public struct InboxNotification: Equatable, Sendable, Identifiable {
    /// What a notification is about.
    public enum Kind: String, Codable, WireEnum {
        /// The account placed an order.
        case orderPlaced
        /// A favourited product came back in stock (its stock went from 0 to more).
        case backInStock
        /// A favourited product's price was lowered.
        case priceDropped

        /// Decodes a wire name; an unknown one is an error listing the allowed values.
        public init(from decoder: any Decoder) throws {
            try self.init(wireFrom: decoder)
        }
    }

    /// `n-<number>`; numbers grow with time, so a newer notification has a larger one.
    public var id: String
    public var kind: Kind
    /// A short heading, for people.
    public var title: String
    /// The details, for people.
    public var body: String
    /// The product it is about (back in stock, price lowered), or nil.
    public var productId: String?
    /// The order it is about (order placed), or nil.
    public var orderId: String?
    /// When it was written (or last updated, for a coalesced one).
    public var createdAt: Date
    /// Whether the account marked it read.
    public var isRead: Bool

    /// Creates a notification value.
    public init(
        id: String, kind: Kind, title: String, body: String, productId: String?, orderId: String?, createdAt: Date,
        isRead: Bool
    ) {
        self.id = id
        self.kind = kind
        self.title = title
        self.body = body
        self.productId = productId
        self.orderId = orderId
        self.createdAt = createdAt
        self.isRead = isRead
    }

    /// The id of the notification numbered `seq`.
    public static func id(seq: Int64) -> String { "n-\(seq)" }

    /// The number in an id made by ``id(seq:)``, or nil for any other text.
    public static func seq(of id: String) -> Int64? {
        guard id.hasPrefix("n-"), let seq = Int64(id.dropFirst(2)), seq > 0 else { return nil }
        return seq
    }
}
