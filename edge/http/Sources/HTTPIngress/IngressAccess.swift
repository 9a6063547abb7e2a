import EventBusBroker
import EventBusSupervisor

/// Who may use which endpoint of the ingress: the bearer tokens of the security file's
/// `http_tokens`, each with a role, checked against what the endpoint needs (docs/http.md).
/// Without tokens every request is let in, as the broker without keys lets every peer in;
/// the ingress then listens on loopback only (``ListenAddress/isLoopback``).
public struct IngressAccess: Sendable {
    /// What a request asks to do.
    public enum Action: String, Sendable, CaseIterable {
        /// `POST /v1/events`: the broker's PUB to `in`.
        case publish
        /// `POST /v1/query/{method}`: the broker's REQ.
        case query

        /// The roles that may: those the broker allows the same verb (docs/security.md).
        var roles: [Role] {
            switch self {
            case .publish, .query: [.backend, .admin]
            }
        }
    }

    /// The tokens and their roles.
    public let tokens: HTTPTokens

    public init(tokens: HTTPTokens) {
        self.tokens = tokens
    }

    /// Whether requests must carry a token.
    public var requiresToken: Bool { !tokens.roles.isEmpty }

    /// Checks a request's `Authorization` header for `action`.
    ///
    /// - Throws: ``HTTPProblem``: 401 `unauthorized` without a known bearer token, 403
    ///   `forbidden` for a token whose role may not do `action`.
    public func check(authorization: String?, for action: Action) throws(HTTPProblem) {
        guard requiresToken else { return }
        guard let authorization, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else {
            throw HTTPProblem(status: 401, code: HTTPProblem.unauthorized,
                              detail: "send Authorization: Bearer TOKEN, a token of the security file's http_tokens")
        }
        let token = String(authorization.dropFirst(7)).trimmingCharacters(in: " \t")
        guard let role = tokens.role(of: token) else {
            throw HTTPProblem(status: 401, code: HTTPProblem.unauthorized, detail: "the bearer token is not one of the security file's http_tokens")
        }
        guard action.roles.contains(role) else {
            throw HTTPProblem(status: 403, code: "forbidden",
                              detail: "\(action.rawValue) is not allowed for a token of role \(role) "
                                  + "(allowed: \(action.roles.map(\.description).joined(separator: ", ")))")
        }
    }
}
