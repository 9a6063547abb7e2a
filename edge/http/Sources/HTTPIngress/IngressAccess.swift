import EventBusBroker
import EventBusSupervisor
import Foundation

/// Who may use which endpoint of the ingress: the bearer tokens of the security file's
/// `http_tokens`, each with a role, and the per-user app tokens signed with its
/// `http_jwt_hs256_secret` or ES256 keys (``AppTokenVerifier``), checked against what the endpoint needs
/// (docs/http.md). Without either, every request is let in, as the broker without keys lets
/// every peer in; the ingress then listens on loopback only (``ListenAddress/isLoopback``).
public struct IngressAccess: Sendable {
    /// What a request asks to do.
    public enum Action: String, Sendable, CaseIterable {
        /// `POST /v1/events`: the broker's PUB to `in`.
        case publish
        /// `POST /v1/query/{method}`: the broker's REQ.
        case query
        /// `GET /v1/stream`: stage `out`, all of it or one user's part.
        case stream
        /// `GET /v1/stream/stats`: the streams' counters.
        case stats

        /// The roles that may: those the broker allows the same verb (docs/security.md); the
        /// stream is also for `backend`, which reads what it published come out.
        var roles: [Role] {
            switch self {
            case .publish, .query, .stats: [.backend, .admin]
            case .stream: [.backend, .subscriber, .admin]
            }
        }

        /// Whether a user's app token may.
        var allowsAppTokens: Bool { self == .stream }
    }

    /// Who a request is.
    public enum Principal: Sendable, Equatable {
        /// No token needed: the server has none.
        case open
        /// A token of `http_tokens`, with its role.
        case role(Role)
        /// A user's app token.
        case user(String)
    }

    /// The tokens and their roles.
    public let tokens: HTTPTokens
    /// The app tokens' verifier, when the security file has a secret for them.
    public let appTokens: AppTokenVerifier?

    public init(tokens: HTTPTokens, appTokens: AppTokenVerifier? = nil) {
        self.tokens = tokens
        self.appTokens = appTokens
    }

    /// Whether requests must carry a token.
    public var requiresToken: Bool { !tokens.roles.isEmpty || appTokens != nil }

    /// Checks a request's `Authorization` header for `action`.
    ///
    /// - Returns: Who asks.
    /// - Throws: ``HTTPProblem``: 401 `unauthorized` without a known bearer token or a valid
    ///   app token, 403 `forbidden` for a token whose role (or an app token) may not do `action`.
    @discardableResult
    public func check(authorization: String?, for action: Action, now: Date = Date()) throws(HTTPProblem) -> Principal {
        guard requiresToken else { return .open }
        guard let authorization, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else {
            throw HTTPProblem(status: 401, code: HTTPProblem.unauthorized, detail: "send Authorization: Bearer TOKEN, a token of the security file's "
                + "http_tokens\(appTokens == nil ? "" : " or a user's app token")")
        }
        let token = String(authorization.dropFirst(7)).trimmingCharacters(in: " \t")
        let principal: Principal
        if let role = tokens.role(of: token) {
            principal = .role(role)
        } else if let appTokens, token.contains(".") {
            do { principal = .user(try appTokens.verify(token, now: now).user) } catch {
                throw HTTPProblem(status: 401, code: HTTPProblem.unauthorized, detail: "app token refused: \(error)")
            }
        } else {
            throw HTTPProblem(status: 401, code: HTTPProblem.unauthorized, detail: "the bearer token is not one of the security file's http_tokens"
                + (appTokens == nil ? "" : " nor a valid app token"))
        }
        switch principal {
        case .role(let role) where !action.roles.contains(role):
            throw HTTPProblem(status: 403, code: "forbidden",
                              detail: "\(action.rawValue) is not allowed for a token of role \(role) "
                                  + "(allowed: \(action.roles.map(\.description).joined(separator: ", ")))")
        case .user where !action.allowsAppTokens:
            throw HTTPProblem(status: 403, code: "forbidden", detail: "\(action.rawValue) is not allowed for an app token: it may only read the stream")
        default:
            return principal
        }
    }
}
