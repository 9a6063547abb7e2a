import Logging
import ZeroMQ

/// The broker's security state when keys are configured: the ZAP handler,
/// the roles of each authenticated name and the access policy.
///
/// Owned by the broker's thread, like the rest of `BrokerCore`.
final class BrokerSecurity {
    let zap: ZAPHandler
    let policy: AccessPolicy
    /// The roles of each client, by the name ZAP gives as user id.
    private let roles: [String: [Role]]

    /// Binds the ZAP handler in `context`; must run before the CURVE sockets bind.
    init(config: SecurityConfig, pipeline: [String], context: Context, logger: Logger) throws(ZMQError) {
        zap = try ZAPHandler(context: context, clients: config.clients, logger: logger)
        policy = AccessPolicy(pipeline: pipeline)
        var roles: [String: [Role]] = [:]
        for client in config.clients { roles[client.name, default: []].append(contentsOf: client.roles) }
        self.roles = roles
    }

    /// The roles of the authenticated user `name` (none for an unknown or missing name).
    func roles(of name: String?) -> [Role] {
        guard let name else { return [] }
        return roles[name] ?? []
    }
}
