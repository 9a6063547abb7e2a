/// Who may do what when keys are configured: the roles of each authenticated
/// name and the access policy. Plain values: the ZAP handler that
/// authenticates the names is the loop's (``BrokerLoop``).
///
/// Owned by the broker's thread, like the rest of `BrokerCore`.
struct BrokerAccess {
    let policy: AccessPolicy
    /// The roles of each client, by the name ZAP gives as user id.
    private let roles: [String: [Role]]

    init(config: SecurityConfig, pipeline: [String]) {
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
