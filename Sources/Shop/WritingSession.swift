/// The signed-in session on whose behalf the running task writes an account's data.
///
/// The server's session sets ``id`` around each write it makes for a signed-in account (a cart change, a
/// checkout, a favourite, a profile, the inbox). The store reads it when the write starts and checks, inside
/// the write's own transaction, that the session is still live: not signed out (in this or any other server)
/// and not expired. When it is not, the write stores nothing and throws ``ShopError/sessionEnded``: a sign-out
/// revokes the session everywhere at once, not when another server's change-log poll gets to it.
///
/// A write with no session set is not checked: a guest's (guests have no session), and the writes the server
/// makes on its own (a sign-in moving a guest's data to the account, tests, benchmarks).
public enum WritingSession {
    /// The id of the session (``AccountSession/sessionId``, never its token) the running task writes for, or
    /// nil.
    @TaskLocal public static var id: String?
}
