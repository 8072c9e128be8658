import JSON

/// A request or notification read from the wire.
public struct Request: Sendable {
    /// The id to answer with; `nil` for a notification, which is never answered.
    public var id: RequestID?
    /// The method name.
    public var method: String
    /// The params: an object, an array, or `nil` when absent or `null` (as LSP clients such as Emacs's
    /// `jsonrpc.el` and pygls send for a method without params).
    public var params: JSONValue?

    /// A request from its parts.
    public init(id: RequestID?, method: String, params: JSONValue?) {
        self.id = id
        self.method = method
        self.params = params
    }

    /// Whether this is a notification.
    public var isNotification: Bool { id == nil }
}

/// What one JSON value on the wire turned out to be.
enum Envelope {
    /// A well-formed request or notification.
    case call(Request)
    /// A response sent by the client (the server sends no requests, so it is logged and dropped).
    case response
    /// Not a valid message; answered with this error and id (`nil` when the id could not be read).
    case invalid(RPCError, id: RequestID?)

    /// Classifies a parsed JSON value as JSON-RPC 2.0 defines messages.
    init(_ value: JSONValue) {
        guard case .object(let members) = value else {
            self = .invalid(.invalidRequest("a message must be a JSON object, not \(value.typeName)"), id: nil)
            return
        }
        var id: RequestID?
        if let rawID = members["id"] {
            guard let readable = RequestID(rawID) else {
                self = .invalid(.invalidRequest("\"id\" must be an integer or a string, not \(rawID.typeName)"), id: nil)
                return
            }
            id = readable
        }
        guard members["jsonrpc"] == "2.0" else {
            self = .invalid(.invalidRequest("\"jsonrpc\" must be exactly \"2.0\""), id: id)
            return
        }
        guard let methodValue = members["method"] else {
            if members["result"] != nil || members["error"] != nil {
                self = .response
            } else {
                self = .invalid(.invalidRequest("missing \"method\""), id: id)
            }
            return
        }
        guard case .string(let method) = methodValue else {
            self = .invalid(.invalidRequest("\"method\" must be a string, not \(methodValue.typeName)"), id: id)
            return
        }
        var params = members["params"]
        switch params {
        case nil, .object?, .array?:
            break
        case .null?:
            // Language-server clients send `"params": null` for "no params"; it means the same as absent.
            params = nil
        case let other?:
            self = .invalid(.invalidRequest("\"params\" must be an object or an array, not \(other.typeName)"), id: id)
            return
        }
        self = .call(Request(id: id, method: method, params: params))
    }
}
