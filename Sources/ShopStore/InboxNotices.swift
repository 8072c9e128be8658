import Shop

/// The text of the inbox's notifications, the same whichever store writes them.
package enum InboxNotices {
    /// The notice of an order just placed.
    package static func orderPlaced(_ order: Order) -> (title: String, body: String) {
        let units = order.lines.reduce(0) { $0 + $1.quantity }
        return ("Order placed", "Order \(order.id): \(units == 1 ? "1 item" : "\(units) items"), total \(order.total).")
    }

    /// The notices a product change gives the accounts that favourited it: back in stock (stock 0 -> more)
    /// and price lowered; none for other changes.
    package static func productChanged(from old: Product, to new: Product) -> [(kind: InboxNotification.Kind, title: String, body: String)] {
        var notices: [(kind: InboxNotification.Kind, title: String, body: String)] = []
        if old.stock == 0, new.stock > 0 {
            notices.append((.backInStock, "Back in stock", "\(new.name) is back in stock (\(new.stock) available)."))
        }
        if new.price < old.price {
            notices.append((.priceDropped, "Price lowered", "\(new.name) now costs \(new.price) (was \(old.price))."))
        }
        return notices
    }
}
