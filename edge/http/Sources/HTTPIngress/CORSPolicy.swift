import HTTPTypes

/// Which web pages of other origins may call the ingress from a browser (`--cors-origin`):
/// a page served by the app's own server that reads `GET /v1/stream` with `fetch` and an
/// app token, such as examples/gateway's demo. None by default: a browser then refuses such
/// a page the answers. Tokens travel in `Authorization`, never in cookies, so the answers
/// allow no credentials.
public struct CORSPolicy: Sendable, Equatable {
    /// The origins allowed (`https://chat.example.com`), or `*` for any.
    public let origins: [String]

    /// The methods and request headers a preflight allows.
    static let methods = "GET, POST, OPTIONS"
    static let requestHeaders = "Authorization, Content-Type, Last-Event-ID"

    /// No origin: the default.
    public static let none = CORSPolicy(checked: [])

    private init(checked origins: [String]) {
        self.origins = origins
    }

    /// - Throws: ``IngressError`` for an entry that is not `*` nor an origin.
    public init(origins: [String]) throws(IngressError) {
        for origin in origins where origin != "*" {
            let scheme = origin.hasPrefix("http://") || origin.hasPrefix("https://")
            let rest = origin.drop { $0 != ":" }.dropFirst(3)
            guard scheme, !rest.isEmpty, !rest.contains("/") else {
                throw IngressError("--cors-origin \(origin): expected an origin, scheme://host[:port] without a path, or *")
            }
        }
        self.origins = origins
    }

    /// Whether any origin is allowed.
    public var isEnabled: Bool { !origins.isEmpty }

    /// The `Access-Control-Allow-Origin` value for a request from `origin`, nil if not allowed.
    public func allowedOrigin(for origin: String?) -> String? {
        guard let origin else { return nil }
        if origins.contains("*") { return "*" }
        return origins.contains(origin) ? origin : nil
    }

    /// The headers to add to the answer to a request from `origin`: none if not allowed; for a
    /// preflight, the methods and headers too.
    public func headers(origin: String?, preflight: Bool) -> HTTPFields {
        guard let allowed = allowedOrigin(for: origin) else { return [:] }
        var fields: HTTPFields = [.accessControlAllowOrigin: allowed]
        if allowed != "*" { fields[.vary] = "Origin" }
        if preflight {
            fields[.accessControlAllowMethods] = Self.methods
            fields[.accessControlAllowHeaders] = Self.requestHeaders
            fields[.accessControlMaxAge] = "600"
        } else {
            fields[.accessControlExposeHeaders] = "Retry-After, WWW-Authenticate"
        }
        return fields
    }
}
