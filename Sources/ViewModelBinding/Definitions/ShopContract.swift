import JSON
import JSONRPC
import JSONSchema
import Shop
import ShopFeatures

extension ProtocolContract<ShopEnvironment> {
    /// The shop's ViewModel types and the vocabulary of their states: the contract `rpc.discover`,
    /// `protocol/openrpc.json` and `protocol/schemas/` are derived from.
    public static let shop = ProtocolContract(
        definitions: [.catalog, .productDetail, .productForm, .cart, .dashboard, .registration, .login, .profile, .priceTicker, .notifications],
        vocabulary: registerShopVocabulary,
        notes: shopNotes,
        extraComponents: [
            "RefusalData": errorData(reasons: ShopError.Reason.refusals, "Why the action was refused (-32001); the state is unchanged."),
            "FailureData": errorData(reasons: ShopError.Reason.failures, "Which service or storage failed (-32003)."),
        ],
        actionErrors: [
            ["code": RPCErrorCode.actionRefused.jsonValue, "message": "Action refused", "data": ["$ref": "#/components/schemas/RefusalData"]],
            ["code": RPCErrorCode.actionFailed.jsonValue, "message": "Action failed", "data": ["$ref": "#/components/schemas/FailureData"]],
        ])

    /// The `data` of an action error: a stable reason from `reasons`, details and whether to retry.
    private static func errorData(reasons: [String], _ description: String) -> JSONValue {
        [
            "type": "object", "additionalProperties": false, "required": ["reason", "details", "retryable"],
            "description": .string(description),
            "properties": [
                "reason": ["enum": .array(reasons.map { .string($0) }), "description": "Stable and machine-readable."],
                "details": ["type": "object", "additionalProperties": ["type": "string"]],
                "retryable": ["type": "boolean", "description": "Whether the same call (or the ViewModel's refresh) may succeed later."],
            ],
        ]
    }

    /// What the types alone cannot say: bounds, and what a member means where its name does not say it.
    private static let shopNotes: [String: [String: JSONValue]] = [
        "CatalogState": [
            "phase": ["description": "loaded: products are the results of query, category and sort. loading: from a search's first keystroke through its 300 ms of quiet to its results (products are the previous results)."],
            "query": ["description": "The search text; a search abandoned by its caller puts back the text of the results shown."],
            "category": ["description": "The category id filtered on, or null for all."],
            "totalCount": ["minimum": 0, "description": "How many products match, loaded or not."],
            "selection": ["description": "Selected product ids, sorted: only listed (loaded) products can be selected."],
            "loadMorePhase": ["description": "Appending the next page; a failed page leaves the list loaded, and loadMore retries."],
        ],
        "ProductDetailState": [
            "isFavorite": ["description": "null while unknown (the favourites could not be loaded; error says why, refresh retries)."],
            "inCart": ["minimum": 0, "description": "Units of this product already in the cart; null while unknown."],
            "quantity": ["minimum": 1],
            "maxQuantity": ["minimum": 0, "description": "min(maxPerOrder, stock) less inCart; 0 when nothing more can be added."],
            "canAddToCart": ["description": "Loaded, in stock, and quantity fits beside the cart's units."],
            "didAddToCart": ["description": "true for 2 s after a successful add."],
        ],
        "ProductFormState": [
            "errors": ["description": "Messages of the invalid fields the user has edited, by field name; after a refused submit, of every invalid field."],
            "createdProductId": ["description": "The product the last successful submission created; null otherwise (always in edit mode)."],
            "mode": ["description": "create (no open args) or edit (open args {productId}): the fields show the stored product and submit stores the fields the user changed (changes stored elsewhere show in the others)."],
            "productId": ["description": "The product edited; null in create mode."],
            "hasChanges": ["description": "Whether the fields differ from the stored product (edit) or an empty form (create). A change stored elsewhere shows in every field the user has not changed."],
            "phase": ["description": "The categories load (and in edit mode the product's): failed when the edited product does not exist or was deleted."],
        ],
        "ProductFormFields": [
            "name": ["description": "3 to 120 characters once trimmed, no control characters."],
            "description": ["description": "At most 500 characters."],
            "price": ["description": "A decimal such as \"12.50\": greater than 0, at most 1000000.00, at most two decimals."],
            "category": ["description": "A category id."],
            "stock": ["description": "Units in stock: a whole number from 0 to 1000000 in decimal digits; \"100\" in a new form."],
        ],
        "CartState": [
            "lines": ["description": "In the order products were first added; a line's total is unitPrice × quantity, computed in minor units."],
            "lastOrder": ["description": "The order the last successful checkout placed; null before, and again once the cart changes."],
            "notices": ["description": "Lines that went without the user removing them; cleared by the user's next change, a checkout or dismissNotices."],
        ],
        "DashboardState": [
            "recentOrders": ["description": "The account's last 3 orders, newest first; failed with a sign-in message for a guest."],
            "trending": ["description": "The products most viewed and added to carts over the last 24 hours (score views + 3 × cartAdds, ties by name), at most 5, only products still in the catalog. Not live: it changes on reload or reloadSection (which include every view and add recorded before them), when a product is deleted, and on a resync."],
        ],
        "TrendingItem": [
            "views": ["minimum": 0, "description": "Times a productDetail loaded the product (once per opening) in the last 24 hours, by anyone."],
            "cartAdds": ["minimum": 0, "description": "Adds to a cart stored in the last 24 hours (adds, not units), by anyone."],
        ],
        "LoginState": [
            "phase": ["description": "loggedOut -> loggingIn -> loggedIn, or failed; loggedIn whenever the session is signed in, however (registration, resume)."],
            "message": ["description": "Why the last attempt failed (the same for a wrong email and a wrong password), or why the last sign-in ended (signed out elsewhere, expired)."],
            "lockedUntil": ["description": "After 5 failed sign-ins for one email within 15 minutes, attempts are refused until then (1 minute, doubling per further failure, at most 15)."],
        ],
        "RegistrationState": [
            "errors": ["description": "Messages of the touched fields that were invalid at their last check (300 ms after their last change), by field name; after a refused register, of every invalid field."],
            "checking": ["description": "Fields whose check is pending (changed within the last 300 ms)."],
            "isFormValid": ["description": "Every field valid as it is now: email like name@example.com, password of 8+ characters with a digit, confirmation equal, terms accepted."],
        ],
        "ProfileState": [
            "errors": ["description": "Messages of the invalid fields the user changed, by field name; after a refused save, of every invalid field."],
            "hasChanges": ["description": "Whether the draft differs from the stored profile."],
        ],
        "ProfileFields": [
            "name": ["description": "1 to 80 characters once trimmed, no control characters."],
            "email": ["description": "Unique among accounts, case ignored."],
            "bio": ["description": "At most 500 characters; line breaks allowed."],
        ],
        "PriceTickerState": [
            "phase": ["description": "loading on open and connect; failed when the product does not exist or was deleted (not retryable)."],
            "name": ["description": "The product's name; empty until loaded."],
            "currentPrice": ["description": "The product's price now; null until loaded."],
            "stock": ["minimum": 0, "description": "The product's units in stock now; null until loaded."],
            "priceHistory": ["maxItems": 100, "description": "The last 100 changes of price or stock (edits, orders, a market simulation), oldest first; its last point is currentPrice and stock once the changes have loaded."],
            "isConnected": ["description": "Whether stored changes from any server show (open connects; disconnect stops, connect loads again)."],
        ],
        "PricePointSnapshot": ["stock": ["minimum": 0], "at": ["description": "When the price and stock became these."]],
        "NotificationsState": [
            "items": ["description": "The notifications loaded so far, newest first (20 per page); new ones appear at the top live, from any server. An unread back-in-stock or price-drop notification that a newer one of the same kind and product replaces leaves the list."],
            "unreadCount": ["minimum": 0, "description": "Unread notifications of the account, loaded or not, as the store counted them at the last change."],
            "hasMore": ["description": "Whether older notifications follow the loaded ones (loadMore)."],
            "loadMorePhase": ["description": "Appending the next page; a failed page leaves the list loaded, and loadMore retries."],
            "enabled": ["description": "The account's notifications switch (profile); while off, nothing new arrives."],
        ],
        "NotificationItem": [
            "id": ["description": "n-<number>; a newer notification has a larger number."],
            "productId": ["description": "The product a backInStock or priceDropped notification is about; null for orderPlaced."],
            "orderId": ["description": "The order an orderPlaced notification is about; null otherwise."],
            "createdAt": ["description": "When it was written, or last updated for a replaced (coalesced) one."],
        ],
        "AccountSummary": ["id": ["minimum": 1]],
        "CappedLineSnapshot": ["requested": ["minimum": 1], "kept": ["minimum": 0]],
        "ProductInfo": ["stock": ["minimum": 0], "maxPerOrder": ["minimum": 1]],
        "CartLineSnapshot": ["quantity": ["minimum": 1]],
        "OrderLineSnapshot": ["quantity": ["minimum": 1]],
        "OrderSnapshot": ["itemCount": ["minimum": 0]],
        "CartTotals": ["itemCount": ["minimum": 0]],
        "CategoryCount": ["productCount": ["minimum": 0]],
    ]
}

/// Registers the leaf and shared types of the shop's states with a schema generator: money and timestamps
/// as `$defs`, and the structs several states share.
public func registerShopVocabulary(_ generator: SchemaGenerator) {
    generator.define(
        Money.self, as: "Money",
        schema: ["type": "string", "pattern": #"^-?[0-9]+\.[0-9]{2}$"#,
                 "description": "An exact decimal amount with two decimals, e.g. \"19.99\"; never a binary number."],
        sample: "0.00")
    generator.define(
        Timestamp.self, as: "Timestamp",
        schema: ["type": "string", "format": "date-time", "description": "ISO 8601, UTC, e.g. \"2025-06-01T00:00:00Z\"."],
        sample: "2025-06-01T00:00:00Z")
    generator.name(ErrorInfo.self, as: "ErrorInfo")
    generator.name(ProductSummary.self, as: "ProductSummary")
    generator.name(ProductInfo.self, as: "ProductInfo")
    generator.name(OrderSnapshot.self, as: "OrderSnapshot")
    generator.name(OrderLineSnapshot.self, as: "OrderLineSnapshot")
    generator.name(CartLineSnapshot.self, as: "CartLineSnapshot")
    generator.name(CartTotals.self, as: "CartTotals")
    generator.name(CartNotice.self, as: "CartNotice")
    generator.name(CategoryCount.self, as: "CategoryCount")
    generator.name(CategoryOption.self, as: "CategoryOption")
    generator.name(ProductFormFields.self, as: "ProductFormFields")
    generator.name(AccountSummary.self, as: "AccountSummary")
    generator.name(CappedLineSnapshot.self, as: "CappedLineSnapshot")
    generator.name(ProfileFields.self, as: "ProfileFields")
    generator.name(TrendingItem.self, as: "TrendingItem")
    generator.name(PricePointSnapshot.self, as: "PricePointSnapshot")
    generator.name(NotificationItem.self, as: "NotificationItem")
}
