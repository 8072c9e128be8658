import JSON

/// A JSON-RPC error object: a code from an open set (``RPCErrorCode``), a message and optional data.
public struct RPCError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The error code.
    public var code: RPCErrorCode
    /// A short human-readable explanation.
    public var message: String
    /// Structured detail, e.g. `{"parameter": "quantity", "reason": "..."}`.
    public var data: JSONValue?

    /// An error from its parts.
    public init(code: RPCErrorCode, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// The error as the JSON object of a response's `error` member.
    public var jsonValue: JSONValue {
        var members: [String: JSONValue] = ["code": code.jsonValue, "message": .string(message)]
        if let data { members["data"] = data }
        return .object(members)
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}

extension RPCError {
    /// A parse error with jansson's explanation.
    public static func parseError(_ detail: String) -> RPCError {
        RPCError(code: .parseError, message: "Parse error: \(detail)")
    }

    /// An invalid request, saying what is wrong with it.
    public static func invalidRequest(_ detail: String) -> RPCError {
        RPCError(code: .invalidRequest, message: "Invalid Request: \(detail)")
    }

    /// No method of that name.
    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(code: .methodNotFound, message: "Method not found: \(method)", data: ["method": .string(method)])
    }

    /// A notification (such as `$/cancelRequest`) sent as a request, with an id: there is no request
    /// method of that name, and the message says how to send it instead.
    public static func notificationSentAsRequest(_ method: String) -> RPCError {
        RPCError(
            code: .methodNotFound,
            message: "Method not found: \(method) is a notification; send it without an id (it is never answered)",
            data: ["method": .string(method), "kind": "notification"])
    }

    /// The params do not fit: `data` names the offending parameter (a dotted path; empty for the params
    /// as a whole) and why.
    public static func invalidParams(parameter: String, reason: String) -> RPCError {
        let subject = parameter.isEmpty ? "params" : "\"\(parameter)\""
        return RPCError(
            code: .invalidParams, message: "Invalid params: \(subject) \(reason)",
            data: ["parameter": .string(parameter), "reason": .string(reason)])
    }

    /// The server failed.
    public static func internalError(_ detail: String) -> RPCError {
        RPCError(code: .internalError, message: "Internal error: \(detail)")
    }

    /// A request before `initialize`.
    public static let serverNotInitialized = RPCError(
        code: .serverNotInitialized, message: "Server not initialized: send \"initialize\" first")

    /// The request was cancelled.
    public static let requestCancelled = RPCError(code: .requestCancelled, message: "Request cancelled")
}
