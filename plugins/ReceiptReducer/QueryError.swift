/// Why a query could not be answered: the wire error `code` and a message naming the param.
public struct QueryError: Error, Sendable, Equatable {
    private enum Code: String {
        case badRequest = "bad_request"
        case notFound = "not_found"
    }

    /// `bad_request` or `not_found` (docs/protocol.md error codes).
    public let code: String
    /// What was wrong, naming the param (`params.cid: required`).
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code.rawValue
        self.message = message
    }

    /// A bad method or param.
    public static func badRequest(_ message: String) -> QueryError { QueryError(.badRequest, message) }
    /// An unknown channel or message.
    public static func notFound(_ message: String) -> QueryError { QueryError(.notFound, message) }
}
