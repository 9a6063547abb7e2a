import EventBusBroker

/// The bearer tokens of the HTTP ingress (`eventbus-http`, docs/http.md), each with the role
/// an HTTP client presenting it gets: the `http_tokens` mapping of the security file.
///
/// ```yaml
/// http_tokens:
///   "2c4f0e1d9a8b7c6d5e4f3a2b": backend   # POST /v1/events, POST /v1/query/{method}
///   "9f8e7d6c5b4a39281706f5e4": subscriber
/// ```
///
/// The broker itself reads no token: it only checks the mapping when it loads the file, so
/// that a broken entry is found at start-up. A token is 16 to 256 characters of RFC 6750's
/// `b64token` (letters, digits, `-._~+/`, then `=` padding); a role is `backend`,
/// `subscriber` or `admin` (a `plugin:NAME` role has no use over HTTP).
public struct HTTPTokens: Sendable, Equatable {
    /// The role of each token.
    public let roles: [String: Role]

    /// No token: an ingress without tokens asks for none (loopback only, docs/http.md).
    public static let none = HTTPTokens(checked: [:])

    private init(checked roles: [String: Role]) {
        self.roles = roles
    }

    /// Checks every token and role of `roles`.
    public init(_ roles: [String: String]) throws(PipelineError) {
        var checked: [String: Role] = [:]
        for (token, name) in roles.sorted(by: { $0.value < $1.value }) {
            guard Self.isValidToken(token) else {
                throw PipelineError(.securityFile, "http_tokens: a token (role \(name)) must be 16 to 256 characters of "
                    + "letters, digits and -._~+/ (then = padding)")
            }
            guard let role = Role(name), role == .backend || role == .subscriber || role == .admin else {
                throw PipelineError(.securityFile, "http_tokens: unknown role \"\(name)\" (backend, subscriber, admin)")
            }
            checked[token] = role
        }
        self.roles = checked
    }

    /// Reads the `http_tokens` node of a security file: a mapping of token strings to role strings.
    static func parse(_ node: Any?) throws(PipelineError) -> HTTPTokens {
        guard let node else { return .none }
        guard let map = node as? [String: Any] else {
            throw PipelineError(.securityFile, "http_tokens must be a mapping of token to role")
        }
        var roles: [String: String] = [:]
        for (token, role) in map {
            guard let role = role as? String else {
                throw PipelineError(.securityFile, "http_tokens: each token maps to one role (backend, subscriber, admin)")
            }
            roles[token] = role
        }
        return try HTTPTokens(roles)
    }

    /// Whether `token` is a `b64token` (RFC 6750) of 16 to 256 characters.
    public static func isValidToken(_ token: String) -> Bool {
        let bytes = Array(token.utf8)
        guard (16...256).contains(bytes.count) else { return false }
        let body = bytes.prefix { $0 != UInt8(ascii: "=") }
        guard bytes.dropFirst(body.count).allSatisfy({ $0 == UInt8(ascii: "=") }), !body.isEmpty else { return false }
        return body.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "/"): true
            default: false
            }
        }
    }

    /// The role of `token`, if it is one of ``roles``; compares with every token in time
    /// that depends on the lengths only, so a wrong guess tells nothing of a right one.
    public func role(of token: String) -> Role? {
        let given = Array(token.utf8)
        var found: Role?
        for (candidate, role) in roles {
            let known = Array(candidate.utf8)
            var difference = UInt8(known.count == given.count ? 0 : 1)
            for index in 0..<known.count {
                difference |= known[index] ^ (index < given.count ? given[index] : 0)
            }
            if difference == 0 { found = role }
        }
        return found
    }
}
