import JSON

/// How a method is served.
public enum MethodHandler: Sendable {
    /// Answered at once, inside the main-actor turn that read the request (no task is created).
    case immediate(@MainActor @Sendable (Request) throws -> JSONValue)
    /// Answered at once, as ``immediate``, with a result that shows state as it stands when the answer is
    /// written: the first closure does the request's work in the turn that read it and returns the one that
    /// makes the result. Alone, the result is made at once; in a batch, when the batch's array is written, so
    /// that it is no older than what the notifications written before the array show.
    case immediateSnapshot(@MainActor @Sendable (Request) throws -> @MainActor () throws -> JSONValue)
    /// Run as a task on the main actor, so that other messages (`ping`, `$/cancelRequest`) are served while
    /// it runs; `$/cancelRequest` cancels the task.
    case task(@MainActor @Sendable (Request) async throws -> JSONValue)
    /// Checked at once, inside the main-actor turn that read the request, then run as a task (as ``task``): the
    /// first closure resolves what the request names as it stands when the request arrives (a ViewModel's handle,
    /// which a `viewModel/close` read in the same turn would otherwise close before the task runs) and throws when
    /// the request is invalid then; it returns the work the task runs.
    case preparedTask(@MainActor @Sendable (Request) throws -> @MainActor @Sendable () async throws -> JSONValue)
}

/// A method's entry in the OpenRPC document that `rpc.discover` returns.
public struct MethodDescription: Sendable {
    /// The method name.
    public var name: String
    /// One line saying what it does.
    public var summary: String
    /// OpenRPC `params` (an array of content descriptors).
    public var params: [JSONValue]
    /// OpenRPC `result` content descriptor; `nil` for a notification.
    public var result: JSONValue?
    /// OpenRPC `errors`.
    public var errors: [JSONValue]

    /// A description from its parts.
    public init(name: String, summary: String, params: [JSONValue] = [], result: JSONValue?, errors: [JSONValue] = []) {
        self.name = name
        self.summary = summary
        self.params = params
        self.result = result
        self.errors = errors
    }

    /// The OpenRPC method object.
    public var jsonValue: JSONValue {
        var members: [String: JSONValue] = [
            "name": .string(name), "summary": .string(summary), "params": .array(params),
        ]
        if let result { members["result"] = result }
        if !errors.isEmpty { members["errors"] = .array(errors) }
        return .object(members)
    }
}

extension Request {
    /// Decodes the params into `T`; absent params decode as an empty object.
    ///
    /// - Throws: ``RPCError`` -32602 naming the offending parameter.
    public func decodeParams<T: Decodable>(_ type: T.Type) throws(RPCError) -> T {
        do {
            return try JSONValueDecoder().decode(type, from: params ?? .object([:]))
        } catch let error as DecodingError {
            throw RPCError(error)
        } catch {
            throw RPCError(from: error)
        }
    }
}
