/// The users of a cluster, one per role, and what each may publish and subscribe to: the
/// `authorization` block `eventbus cluster up` writes into every server's configuration
/// (docs/scale-out.md, "Users per role"). A value; the passwords are given or generated,
/// and the block holds only their bcrypt hashes (``PasswordHash``).
///
/// | role | user | may publish |
/// |---|---|---|
/// | admin | `admin` | anything (operators, `cluster up`'s own checks, the raw bench) |
/// | gateway | `gateway` | every stage (`eventbus.>`, `in` included), the JetStream API, the KV buckets |
/// | plugin NAME | `plugin-NAME` | its own stage `eventbus.NAME` only, its keys in `EVENTBUS_STATE` (`NAME.>`) and `EVENTBUS_LEASES` (`NAME`), and the few JetStream API calls those buckets need |
///
/// So nothing but a gateway (or the admin) can write to `in`, and a plugin's user can write
/// no stage but its own. Every user may subscribe to `_INBOX.>` only besides what its role
/// reads: the answers to its requests.
public struct ClusterUsers: Sendable, Equatable {
    public enum Role: Sendable, Hashable {
        case admin
        case gateway
        case plugin(String)

        /// The user name.
        public var user: String {
            switch self {
            case .admin: "admin"
            case .gateway: "gateway"
            case .plugin(let name): "plugin-\(name)"
            }
        }
    }

    /// The plugins that get a user, in order.
    public var plugins: [String]
    /// Each role's password: what its clients put in their URLs.
    public private(set) var passwords: [Role: String]
    /// Each role's password as a bcrypt hash: what the servers' configuration holds.
    public private(set) var passwordHashes: [Role: String]

    /// Users for the admin, the gateways and each of `plugins`, with the passwords given or,
    /// for a role without one, a random one of 32 letters and digits; each hashed with
    /// bcrypt (about 64 ms a role).
    ///
    /// - Throws: ``ClusterError/invalidPluginName(_:)`` for a name that is not a single
    ///   subject token of letters, digits, `-` and `_`; ``ClusterError/cannotHash(reason:)``
    ///   when the system's libxcrypt cannot make a bcrypt hash.
    public init(plugins: [String], passwords: [Role: String] = [:]) throws(ClusterError) {
        for name in plugins where !Self.isValidName(name) { throw .invalidPluginName(name) }
        self.plugins = plugins
        var all = passwords
        var hashes: [Role: String] = [:]
        for role in [Role.admin, .gateway] + plugins.map(Role.plugin) {
            let password = all[role] ?? Self.randomPassword()
            all[role] = password
            hashes[role] = try PasswordHash.bcrypt(password)
        }
        self.passwords = all
        self.passwordHashes = hashes
    }

    /// Every role, in order: admin, gateway, then the plugins.
    public var roles: [Role] { [.admin, .gateway] + plugins.map(Role.plugin) }

    /// What `role` may publish to.
    public func publishAllowed(_ role: Role) -> [String] {
        switch role {
        case .admin:
            return [">"]
        case .gateway:
            return ["eventbus.>", "$JS.API.>", "$JS.ACK.>", "$JS.FC.>", "$KV.>"]
        case .plugin(let name):
            let buckets = [KVPluginStore.bucket, PluginLease.bucket]
            return ["eventbus.\(name)", "$KV.\(KVPluginStore.bucket).\(name).>", "$KV.\(PluginLease.bucket).\(name)", "$JS.API.INFO"]
                + buckets.flatMap { bucket in
                    ["$JS.API.STREAM.INFO.KV_\(bucket)", "$JS.API.STREAM.CREATE.KV_\(bucket)",
                     "$JS.API.STREAM.MSG.GET.KV_\(bucket)", "$JS.API.DIRECT.GET.KV_\(bucket).>"]
                }
        }
    }

    /// What `role` may subscribe to.
    public func subscribeAllowed(_ role: Role) -> [String] {
        switch role {
        case .admin: [">"]
        case .gateway: ["_INBOX.>", "eventbus.replies.>"]
        case .plugin: ["_INBOX.>"]
        }
    }

    /// `urls` (`nats://host:port`) with `role`'s user and password in each: a `--backend`
    /// value for that role.
    public func urls(_ urls: [String], for role: Role) -> [String] {
        let password = passwords[role] ?? ""
        return urls.map { url in
            guard let scheme = url.range(of: "://") else { return "\(role.user):\(password)@\(url)" }
            return url[..<scheme.upperBound] + "\(role.user):\(password)@" + url[scheme.upperBound...]
        }
    }

    /// The `authorization` block of a server's configuration: each user with its
    /// password's bcrypt hash, never the password.
    public var authorizationBlock: String {
        var lines = ["authorization {", "  users = ["]
        for role in roles {
            let publish = publishAllowed(role).map(NodeConfig.quoted).joined(separator: ", ")
            let subscribe = subscribeAllowed(role).map(NodeConfig.quoted).joined(separator: ", ")
            lines.append("    { user: \(NodeConfig.quoted(role.user)), password: \(NodeConfig.quoted(passwordHashes[role] ?? "")),")
            lines.append("      permissions: { publish: { allow: [\(publish)] }, subscribe: { allow: [\(subscribe)] } } }")
        }
        lines += ["  ]", "}"]
        return lines.joined(separator: "\n")
    }

    /// A plugin name usable as one subject token and one KV key token.
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }

    static func randomPassword() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<32).map { _ in alphabet.randomElement(using: &generator)! })
    }
}
