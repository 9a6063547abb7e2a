import EventBus
import Foundation
import Hummingbird

/// An error the backend answers with: a status and `{"error": {"field"?, "message"}}`.
public struct APIError: HTTPResponseError, Sendable {
    /// The HTTP status.
    public let status: HTTPResponse.Status
    /// The request field at fault (`user_id`, `Idempotency-Key`), if one is.
    public let field: String?
    /// What went wrong, for a person.
    public let message: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - status: The HTTP status.
    ///   - field: The request field at fault.
    ///   - message: What went wrong.
    public init(_ status: HTTPResponse.Status, field: String? = nil, _ message: String) {
        self.status = status
        self.field = field
        self.message = message
    }

    /// A 400 naming `field`.
    static func badField(_ field: String, _ message: String) -> APIError {
        APIError(.badRequest, field: field, message)
    }

    /// The answer to a bus call that failed: 503 when the bus is down or slow, 422 when it
    /// refused the event, 400/404 for a query it refused.
    static func bus(_ error: BusError) -> APIError {
        switch error.code {
        case .timeout, .busy:
            return APIError(.serviceUnavailable, "the event bus did not answer in time (\(error.code.wire))")
        case .unknownService:
            return APIError(.serviceUnavailable, "the receipts service is not running: \(error.message)")
        case .badEvent, .unknownType, .tooLarge:
            return APIError(.unprocessableContent, field: fieldName(in: error.message) ?? "event", error.description)
        case .badRequest:
            return APIError(.badRequest, field: fieldName(in: error.message), error.description)
        case .notFound:
            return APIError(.notFound, error.description)
        default:
            return APIError(.badGateway, error.description)
        }
    }

    /// The field a bus error message names: `data.user_id` in `event 0: data.user_id: …`.
    static func fieldName(in message: String) -> String? {
        message.firstMatch(of: /(?:data|params)\.[A-Za-z0-9_.\[\]]+/).map { String($0.output) }
    }

    private struct Body: Encodable {
        struct Detail: Encodable {
            let field: String?
            let message: String
        }

        let error: Detail
    }

    /// The JSON response.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        try JSONResponse.make(Body(error: .init(field: field, message: message)), status: status)
    }
}
