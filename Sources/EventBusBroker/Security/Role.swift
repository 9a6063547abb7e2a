/// What an authenticated peer is allowed to do (see docs/security.md).
public enum Role: Sendable, Hashable, CustomStringConvertible {
    /// A chat backend: PUB to `in`, REQ.
    case backend
    /// The plugin of one pipeline stage: CONSUME the stage before it, PUB its own stage, HELLO services.
    case plugin(String)
    /// A reader of results: the stream and CONSUME of `out` and `diag` only.
    case subscriber
    /// An operator: every verb, STATS included.
    case admin

    /// Parses `backend`, `plugin:NAME`, `subscriber` or `admin`.
    public init?(_ text: String) {
        switch text {
        case "backend": self = .backend
        case "subscriber": self = .subscriber
        case "admin": self = .admin
        default:
            guard text.hasPrefix("plugin:") else { return nil }
            let name = String(text.dropFirst("plugin:".count))
            guard !name.isEmpty else { return nil }
            self = .plugin(name)
        }
    }

    public var description: String {
        switch self {
        case .backend: "backend"
        case .plugin(let name): "plugin:\(name)"
        case .subscriber: "subscriber"
        case .admin: "admin"
        }
    }
}
