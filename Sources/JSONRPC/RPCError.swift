import JSON

/// A JSON-RPC error object: an open set of codes (named statics below), a message and optional data.
public struct RPCError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The error code.
    public var code: Int
    /// A short human-readable explanation.
    public var message: String
    /// Structured detail, e.g. `{"parameter": "quantity", "reason": "..."}`.
    public var data: JSONValue?

    /// An error from its parts.
    public init(code: Int, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// The error as the JSON object of a response's `error` member.
    public var jsonValue: JSONValue {
        var members: [String: JSONValue] = ["code": .integer(Int64(code)), "message": .string(message)]
        if let data { members["data"] = data }
        return .object(members)
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}

extension RPCError {
    /// -32700: the message is not valid JSON.
    public static let parseErrorCode = -32700
    /// -32600: the message is JSON but not a valid request.
    public static let invalidRequestCode = -32600
    /// -32601: no such method.
    public static let methodNotFoundCode = -32601
    /// -32602: the params do not fit the method.
    public static let invalidParamsCode = -32602
    /// -32603: the server failed while handling the request.
    public static let internalErrorCode = -32603
    /// -32002: a request other than `initialize`, `ping` or `rpc.discover` came before `initialize`.
    public static let serverNotInitializedCode = -32002
    /// -32800: the client cancelled the request with `$/cancelRequest`.
    public static let requestCancelledCode = -32800

    /// A parse error with jansson's explanation.
    public static func parseError(_ detail: String) -> RPCError {
        RPCError(code: parseErrorCode, message: "Parse error: \(detail)")
    }

    /// An invalid request, saying what is wrong with it.
    public static func invalidRequest(_ detail: String) -> RPCError {
        RPCError(code: invalidRequestCode, message: "Invalid Request: \(detail)")
    }

    /// No method of that name.
    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(code: methodNotFoundCode, message: "Method not found: \(method)", data: ["method": .string(method)])
    }

    /// A notification (such as `$/cancelRequest`) sent as a request, with an id: there is no request
    /// method of that name, and the message says how to send it instead.
    public static func notificationSentAsRequest(_ method: String) -> RPCError {
        RPCError(
            code: methodNotFoundCode,
            message: "Method not found: \(method) is a notification; send it without an id (it is never answered)",
            data: ["method": .string(method), "kind": "notification"])
    }

    /// The params do not fit: `data` names the offending parameter (a dotted path; empty for the params
    /// as a whole) and why.
    public static func invalidParams(parameter: String, reason: String) -> RPCError {
        let subject = parameter.isEmpty ? "params" : "\"\(parameter)\""
        return RPCError(
            code: invalidParamsCode, message: "Invalid params: \(subject) \(reason)",
            data: ["parameter": .string(parameter), "reason": .string(reason)])
    }

    /// The server failed.
    public static func internalError(_ detail: String) -> RPCError {
        RPCError(code: internalErrorCode, message: "Internal error: \(detail)")
    }

    /// A request before `initialize`.
    public static let serverNotInitialized = RPCError(
        code: serverNotInitializedCode, message: "Server not initialized: send \"initialize\" first")

    /// The request was cancelled.
    public static let requestCancelled = RPCError(code: requestCancelledCode, message: "Request cancelled")
}
