/// A failure the shop reports to its callers: a refused action or an unavailable service.
///
/// `reason` is a stable, machine-readable code; the wire layer sends it as JSON-RPC `data.reason`,
/// together with ``details``. `message` is for people and may change.
///
/// Reasons (an open set; these are the ones the shop uses):
/// - `productNotFound`: no product with that id (`details.productId`).
/// - `categoryNotFound`: no category with that id (`details.categoryId`).
/// - `invalidQuantity`: a quantity below the allowed minimum (`details.quantity`).
/// - `outOfStock`: the product has no stock left (`details.productId`).
/// - `quantityExceedsStock`: more units than in stock (`details.productId`, `details.available`).
/// - `quantityExceedsMaximum`: more units than one order may hold (`details.productId`, `details.maximum`).
/// - `notInCart`: the product has no line in the cart (`details.productId`).
/// - `emptyCart`: checkout of an empty cart.
/// - `validationFailed`: a form or new product is invalid (`details` maps each invalid field to its message).
/// - `alreadySubmitting`: the same submission is still running.
/// - `notReady`: the action needs content that is still loading.
/// - `loadFailed`: the action needs content whose load failed (`details.content`); `retryable` says whether
///   the ViewModel's `refresh` may help.
/// - `notListed`: the product is not in the list the catalog has loaded (`details.productId`).
/// - `alreadySubmitted`: the same submission already succeeded (`details.productId`); change it or reset first.
/// - `cartChanged`: checkout of a cart that is no longer the one shown (another session changed it); the
///   new cart is shown (`details.revision`).
/// - `idempotencyKeyReused`: an idempotency key already used for a different action or params.
/// - `nothingSelected`: deleting a selection that is empty.
/// - `signInRequired`: the action or ViewModel needs a signed-in session (also: a write of a session that was
///   signed out or expired in the store, ``sessionEnded``).
/// - `alreadySignedIn`: signing in or registering while signed in (sign out first).
/// - `invalidCredentials`: the email or the password is wrong (never which).
/// - `signInLocked`: too many failed sign-ins for this email lately (`details.retryAfter` seconds,
///   `details.lockedUntil`).
/// - `sessionInvalid`: a session token that is malformed, unknown, expired or signed out.
/// - `emailTaken`: another account has this email (`details.email`).
/// - `notificationNotFound`: no notification with that id in the inbox shown (`details.id`).
/// - `serviceUnavailable`: a service failed; retrying may succeed (`isRetryable` is `true`, `details.service`).
/// - `storageFailed`: the database failed (`details.code`, the SQLite result code).
public struct ShopError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Stable machine-readable code such as `"quantityExceedsStock"`.
    public var reason: String
    /// Human-readable explanation.
    public var message: String
    /// Machine-readable context, such as `["productId": "p-0001"]`.
    public var details: [String: String]
    /// Whether trying the same call again may succeed.
    public var isRetryable: Bool

    /// Creates an error.
    public init(reason: String, message: String, details: [String: String] = [:], isRetryable: Bool = false) {
        self.reason = reason
        self.message = message
        self.details = details
        self.isRetryable = isRetryable
    }

    /// Whether this error refuses an action (the caller asked for something not allowed), as opposed to
    /// an operational failure of a service or the storage.
    public var isRefusal: Bool {
        reason != Reason.serviceUnavailable && reason != Reason.storageFailed
    }

    public var description: String { "\(reason): \(message)" }

    /// The reasons the shop uses, as constants.
    public enum Reason {
        public static let productNotFound = "productNotFound"
        public static let categoryNotFound = "categoryNotFound"
        public static let invalidQuantity = "invalidQuantity"
        public static let outOfStock = "outOfStock"
        public static let quantityExceedsStock = "quantityExceedsStock"
        public static let quantityExceedsMaximum = "quantityExceedsMaximum"
        public static let notInCart = "notInCart"
        public static let emptyCart = "emptyCart"
        public static let validationFailed = "validationFailed"
        public static let alreadySubmitting = "alreadySubmitting"
        public static let notReady = "notReady"
        public static let loadFailed = "loadFailed"
        public static let notListed = "notListed"
        public static let alreadySubmitted = "alreadySubmitted"
        public static let cartChanged = "cartChanged"
        public static let idempotencyKeyReused = "idempotencyKeyReused"
        public static let nothingSelected = "nothingSelected"
        public static let signInRequired = "signInRequired"
        public static let alreadySignedIn = "alreadySignedIn"
        public static let invalidCredentials = "invalidCredentials"
        public static let signInLocked = "signInLocked"
        public static let sessionInvalid = "sessionInvalid"
        public static let emailTaken = "emailTaken"
        public static let notificationNotFound = "notificationNotFound"
        public static let serviceUnavailable = "serviceUnavailable"
        public static let storageFailed = "storageFailed"

        /// Every reason that refuses an action (-32001 on the wire).
        public static let refusals = [
            productNotFound, categoryNotFound, invalidQuantity, outOfStock, quantityExceedsStock, quantityExceedsMaximum,
            notInCart, emptyCart, validationFailed, alreadySubmitting, alreadySubmitted, notReady, loadFailed, notListed,
            nothingSelected, cartChanged, idempotencyKeyReused, signInRequired, alreadySignedIn, invalidCredentials,
            signInLocked, sessionInvalid, emailTaken, notificationNotFound,
        ]
        /// Every reason of an operational failure (-32003 on the wire).
        public static let failures = [serviceUnavailable, storageFailed]
    }
}

extension ShopError {
    /// No product with that id.
    public static func productNotFound(_ productId: String) -> ShopError {
        ShopError(reason: Reason.productNotFound, message: "Product \(productId) does not exist.",
                  details: ["productId": productId])
    }

    /// No category with that id.
    public static func categoryNotFound(_ categoryId: String) -> ShopError {
        ShopError(reason: Reason.categoryNotFound, message: "Category \(categoryId) does not exist.",
                  details: ["categoryId": categoryId])
    }

    /// A quantity below the minimum.
    public static func invalidQuantity(_ quantity: Int, minimum: Int) -> ShopError {
        ShopError(reason: Reason.invalidQuantity, message: "The quantity must be at least \(minimum), not \(quantity).",
                  details: ["quantity": String(quantity)])
    }

    /// The product has no stock.
    public static func outOfStock(_ productId: String, name: String) -> ShopError {
        ShopError(reason: Reason.outOfStock, message: "\(name) (\(productId)) is out of stock.",
                  details: ["productId": productId])
    }

    /// More units than in stock.
    public static func quantityExceedsStock(_ productId: String, name: String, requested: Int, available: Int) -> ShopError {
        ShopError(reason: Reason.quantityExceedsStock,
                  message: "Only \(available) of \(name) (\(productId)) in stock; \(requested) requested.",
                  details: ["productId": productId, "available": String(available), "requested": String(requested)])
    }

    /// More units than one order may hold.
    public static func quantityExceedsMaximum(_ productId: String, name: String, requested: Int, maximum: Int) -> ShopError {
        ShopError(reason: Reason.quantityExceedsMaximum,
                  message: "At most \(maximum) of \(name) (\(productId)) per order; \(requested) requested.",
                  details: ["productId": productId, "maximum": String(maximum), "requested": String(requested)])
    }

    /// The product has no line in the cart.
    public static func notInCart(_ productId: String) -> ShopError {
        ShopError(reason: Reason.notInCart, message: "Product \(productId) is not in the cart.",
                  details: ["productId": productId])
    }

    /// Checkout of an empty cart.
    public static let emptyCart = ShopError(reason: Reason.emptyCart, message: "The cart is empty.")

    /// Invalid input; `fieldErrors` maps each invalid field to its message.
    public static func validationFailed(_ fieldErrors: [String: String]) -> ShopError {
        let summary = fieldErrors.keys.sorted().map { "\($0): \(fieldErrors[$0]!)" }.joined(separator: "; ")
        return ShopError(reason: Reason.validationFailed, message: "Please correct the form. \(summary)", details: fieldErrors)
    }

    /// The same submission is still running.
    public static let alreadySubmitting = ShopError(
        reason: Reason.alreadySubmitting, message: "This is already being submitted.")

    /// The action needs content that is still loading.
    public static let notReady = ShopError(reason: Reason.notReady, message: "Still loading; try again when loaded.")

    /// The action needs content whose load failed.
    /// - Parameters:
    ///   - content: what failed to load (`product`, `cart`, `categories`, `favorites`).
    ///   - message: the load's failure, for people.
    ///   - retryable: whether refreshing may help.
    public static func loadFailed(_ content: String, message: String, retryable: Bool) -> ShopError {
        ShopError(
            reason: Reason.loadFailed,
            message: retryable ? "\(message) Refresh to try again." : message,
            details: ["content": content], isRetryable: retryable)
    }

    /// A product that existed was deleted.
    public static func productGone(_ productId: String) -> ShopError {
        ShopError(reason: Reason.productNotFound, message: "Product \(productId) is no longer available.",
                  details: ["productId": productId])
    }

    /// The product is not in the loaded list (it may exist: only listed products can be selected).
    public static func notListed(_ productId: String) -> ShopError {
        ShopError(reason: Reason.notListed,
                  message: "Product \(productId) is not in the loaded list; only listed products can be selected.",
                  details: ["productId": productId])
    }

    /// Checkout of a cart other than the one shown: it changed since (`revision` is the stored one).
    public static func cartChanged(revision: Int64) -> ShopError {
        ShopError(reason: Reason.cartChanged,
                  message: "The cart changed since it was shown (another session changed it); check it and try again.",
                  details: ["revision": String(revision)])
    }

    /// An idempotency key already used for another action or other params.
    public static func idempotencyKeyReused(_ key: String) -> ShopError {
        ShopError(reason: Reason.idempotencyKeyReused,
                  message: "The idempotency key \"\(key)\" was already used for a different request, or by another shopper.",
                  details: ["idempotencyKey": key])
    }

    /// The form's submission already succeeded; submitting it unchanged would create a duplicate.
    public static func alreadySubmitted(productId: String) -> ShopError {
        ShopError(reason: Reason.alreadySubmitted,
                  message: "This product was already created (\(productId)). Change the form or reset it to create another.",
                  details: ["productId": productId])
    }

    /// Deleting an empty selection.
    public static let nothingSelected = ShopError(reason: Reason.nothingSelected, message: "No products are selected.")

    /// A service failed; retrying may succeed.
    public static func serviceUnavailable(_ service: String) -> ShopError {
        ShopError(reason: Reason.serviceUnavailable, message: "The \(service) service is unavailable. Please try again.",
                  details: ["service": service], isRetryable: true)
    }

    /// The action or ViewModel needs a signed-in session.
    public static func signInRequired(_ what: String) -> ShopError {
        ShopError(reason: Reason.signInRequired, message: "Sign in to \(what).")
    }

    /// A write on behalf of a session that was signed out (in this or another server) or expired in the store,
    /// before this server noticed: nothing was stored, and the session is a guest's again (see
    /// ``WritingSession``). `signInRequired`, as for any action that needs a signed-in session.
    public static let sessionEnded = ShopError(
        reason: Reason.signInRequired, message: "You were signed out (in another window, or the session expired); sign in again.")

    /// Signing in or registering while signed in.
    public static let alreadySignedIn = ShopError(
        reason: Reason.alreadySignedIn, message: "Already signed in; sign out first.")

    /// Wrong email or password; never says which.
    public static let invalidCredentials = ShopError(
        reason: Reason.invalidCredentials, message: "The email or password is wrong.")

    /// Too many failed sign-ins for one email lately.
    /// - Parameters:
    ///   - retryAfter: whole seconds until attempts are accepted again (at least 1).
    ///   - lockedUntil: when, as ISO 8601.
    public static func signInLocked(retryAfter: Int, lockedUntil: String) -> ShopError {
        ShopError(reason: Reason.signInLocked,
                  message: "Too many failed sign-ins for this email. Try again in \(retryAfter == 1 ? "1 second" : "\(retryAfter) seconds").",
                  details: ["retryAfter": String(retryAfter), "lockedUntil": lockedUntil], isRetryable: true)
    }

    /// A token that does not resume a session.
    public static let sessionInvalid = ShopError(
        reason: Reason.sessionInvalid, message: "This session has ended or is not valid; sign in again.")

    /// Another account has this email.
    public static func emailTaken(_ email: String) -> ShopError {
        ShopError(reason: Reason.emailTaken, message: "An account with this email already exists.",
                  details: ["email": email])
    }

    /// No notification with that id in the inbox shown (loaded pages).
    public static func notificationNotFound(_ id: String) -> ShopError {
        ShopError(reason: Reason.notificationNotFound,
                  message: "No notification \"\(id)\" in the inbox shown; load more or refresh to see older ones.",
                  details: ["id": id])
    }
}
