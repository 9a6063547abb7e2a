import EventBus

/// An error answer of the HTTP ingress as a problem details object (RFC 9457), served as
/// `application/problem+json`: `type`, `title`, `status`, `detail`, plus `code` (the bus's
/// error code, docs/protocol.md, or one of the ingress's own: `unsupported_media_type`,
/// `unauthorized`), and `field` and `event` when the error names them.
public struct HTTPProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status.
    public var status: Int
    /// The bus's error code, or the ingress's own.
    public var code: String
    /// What went wrong, for a person: the bus's message, or the ingress's.
    public var detail: String
    /// The field at fault (`data.user_id`, `ce-id`, `type`), when known.
    public var field: String?
    /// The index of the event at fault in the request (0 for a single event), when known.
    public var event: Int?
    /// Seconds after which a retry may succeed (`Retry-After`), for `busy` and `timeout`.
    public var retryAfter: Int?

    /// The media type of a problem body.
    public static let mediaType = "application/problem+json"

    public init(status: Int, code: String, detail: String, field: String? = nil, event: Int? = nil, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.detail = detail
        self.field = field
        self.event = event
        self.retryAfter = retryAfter
    }

    /// The problem type: a URN per code, documented in docs/http.md.
    public var type: String { "urn:eventbus:problem:\(code)" }

    /// A short summary of the problem type, the same for every occurrence of a code.
    public var title: String {
        switch code {
        case ErrorCode.badEvent.wire: "The event is not valid"
        case ErrorCode.badJSON.wire: "The body is not valid JSON"
        case ErrorCode.unknownType.wire: "The event type is not an ingress type"
        case ErrorCode.tooLarge.wire: "The request is too large"
        case ErrorCode.forbidden.wire: "This token's role may not do that"
        case ErrorCode.busy.wire: "The bus cannot take the request now"
        case ErrorCode.timeout.wire: "The bus did not answer in time"
        case ErrorCode.badRequest.wire: "The query is not valid"
        case ErrorCode.notFound.wire: "Not found"
        case ErrorCode.unknownService.wire: "No service answers the query"
        case Self.unsupportedMediaType: "Unsupported media type"
        case Self.unauthorized: "A bearer token is required"
        default: "The bus refused the request"
        }
    }

    /// The ingress's code for a body whose `Content-Type` it does not take (415).
    public static let unsupportedMediaType = "unsupported_media_type"
    /// The ingress's code for a missing or unknown bearer token (401).
    public static let unauthorized = "unauthorized"

    /// The problem as JSON.
    public var json: [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("type")
        writer.string(type)
        writer.key("title")
        writer.string(title)
        writer.key("status")
        writer.int(status)
        writer.key("detail")
        writer.string(detail)
        writer.key("code")
        writer.string(code)
        if let field {
            writer.key("field")
            writer.string(field)
        }
        if let event {
            writer.key("event")
            writer.int(event)
        }
        writer.endObject()
        return writer.bytes
    }

    public var description: String { "\(status) \(code): \(detail)" }
}
