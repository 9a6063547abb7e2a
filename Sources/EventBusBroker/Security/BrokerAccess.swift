import EventBus

/// Who may do what when keys are configured: the roles of each authenticated
/// name and the access policy. Plain values: the ZAP handler that
/// authenticates the names is the loop's (``BrokerLoop``, or the JetStream
/// gateway's).
///
/// Owned by the broker's thread, like the rest of `BrokerCore`.
package struct BrokerAccess: Sendable {
    let policy: AccessPolicy
    /// The configured stages, for the prefixes of CONSUME.
    let stages: [String]
    /// The roles of each client, by the name ZAP gives as user id.
    private let roles: [String: [Role]]

    package init(config: SecurityConfig, pipeline: [String]) {
        policy = AccessPolicy(pipeline: pipeline)
        stages = [Stage.in] + pipeline + [Stage.out, Stage.diag]
        var roles: [String: [Role]] = [:]
        for client in config.clients { roles[client.name, default: []].append(contentsOf: client.roles) }
        self.roles = roles
    }

    /// The roles of the authenticated user `name` (none for an unknown or missing name).
    func roles(of name: String?) -> [Role] {
        guard let name else { return [] }
        return roles[name] ?? []
    }

    /// The stages of `names` a topic prefix can match.
    package static func stages(_ names: some Sequence<String>, matching prefix: [UInt8]) -> Set<String> {
        var result: Set<String> = []
        for stage in names {
            let head = Array(stage.utf8) + [UInt8(ascii: "/")]
            if prefix.starts(with: head) || head.starts(with: prefix) { result.insert(stage) }
        }
        return result
    }

    /// Refuses `message` with `forbidden` when its sender's roles (by the ZAP user id
    /// `userID`) do not allow it (docs/security.md); a missing frame it must read is
    /// `bad_frame`, as the command's own checks would say.
    package func authorize(_ message: CommandMessage, userID: String?) throws(BusError) {
        let roles = roles(of: userID)
        // Named only when refusing: an allowed command builds no string.
        func who() -> String {
            userID.map { "client \($0) (\(roles.map(\.description).joined(separator: ", ")))" } ?? "an unauthenticated peer"
        }
        guard roles.contains(where: { policy.allows(message.verb, $0) }) else {
            throw BusError(.forbidden, "\(message.verb.rawValue) is not allowed for \(who())")
        }
        switch message.verb {
        case .pub, .pubs:
            let stage = String(decoding: try message.argument(0, "STAGE"), as: UTF8.self)
            guard roles.contains(where: { policy.publishStages($0)?.contains(stage) ?? true }) else {
                throw BusError(.forbidden, "\(message.verb.rawValue) to stage \(stage.prefix(64)) is not allowed for \(who())")
            }
        case .consume:
            try authorizeConsumerName(message, roles: roles, userID: userID, who: who)
            for prefix in message.arguments.dropFirst(3) {
                let matching = Self.stages(stages, matching: prefix)
                guard roles.contains(where: { policy.consumeStages($0).map(matching.isSubset(of:)) ?? true }) else {
                    throw BusError(.forbidden, "CONSUME of prefix \"\(String(decoding: prefix.prefix(64), as: UTF8.self))\" "
                        + "(stages \(matching.sorted().joined(separator: ", "))) is not allowed for \(who())")
                }
            }
        case .ack, .cancel:
            try authorizeConsumerName(message, roles: roles, userID: userID, who: who)
        case .hello where !roles.contains(where: policy.mayDeclareServices):
            if let value = try? JSONParser.parse(try message.argument(0, "JSON")), value["services"] != nil {
                throw BusError(.forbidden, "declaring services in HELLO is not allowed for \(who())")
            }
        default:
            break
        }
    }

    /// Refuses a consumer NAME outside the namespace of every role of the sender
    /// (``AccessPolicy/mayName(consumer:_:client:)``): a durable consumer belongs to a
    /// principal, never to whoever names it first.
    private func authorizeConsumerName(
        _ message: CommandMessage, roles: [Role], userID: String?, who: () -> String
    ) throws(BusError) {
        let name = String(decoding: try message.argument(0, "NAME"), as: UTF8.self)
        guard roles.contains(where: { policy.mayName(consumer: name, $0, client: userID) }) else {
            throw BusError(.forbidden, "\(message.verb.rawValue) of consumer \(name.prefix(64)) is not allowed for \(who()): "
                + "its consumer names are \(policy.namespaces(roles, client: userID))")
        }
    }
}
