import EventBus
import ZeroMQ

extension BrokerCore {
    /// Refuses `message` with `forbidden` when its sender's roles do not allow it.
    /// Without keys configured every peer may do everything.
    func authorize(_ message: CommandMessage, userID: String?) throws(BusError) {
        guard let access else { return }
        let roles = access.roles(of: userID)
        let policy = access.policy
        // Named only when refusing: an allowed command builds no string.
        func who() -> String {
            userID.map { "client \($0) (\(roles.map(\.description).joined(separator: ", ")))" } ?? "an unauthenticated peer"
        }
        guard roles.contains(where: { policy.allows(message.verb, $0) }) else {
            throw forbidden("\(message.verb.rawValue) is not allowed for \(who())")
        }
        switch message.verb {
        case .pub, .pubs:
            let stage = String(decoding: try argument(message, 0, "STAGE"), as: UTF8.self)
            guard roles.contains(where: { policy.publishStages($0)?.contains(stage) ?? true }) else {
                throw forbidden("\(message.verb.rawValue) to stage \(stage.prefix(64)) is not allowed for \(who())")
            }
        case .consume:
            try authorizeConsumerName(message, roles: roles, userID: userID, who: who)
            for prefix in message.arguments.dropFirst(3) {
                let matching = stagesMatching(prefix)
                guard roles.contains(where: { policy.consumeStages($0).map(matching.isSubset(of:)) ?? true }) else {
                    throw forbidden("CONSUME of prefix \"\(String(decoding: prefix.prefix(64), as: UTF8.self))\" "
                        + "(stages \(matching.sorted().joined(separator: ", "))) is not allowed for \(who())")
                }
            }
        case .ack, .cancel:
            try authorizeConsumerName(message, roles: roles, userID: userID, who: who)
        case .hello where !roles.contains(where: policy.mayDeclareServices):
            if let value = try? JSONParser.parse(try argument(message, 0, "JSON")), value["services"] != nil {
                throw forbidden("declaring services in HELLO is not allowed for \(who())")
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
        guard let access else { return }
        let name = String(decoding: try argument(message, 0, "NAME"), as: UTF8.self)
        guard roles.contains(where: { access.policy.mayName(consumer: name, $0, client: userID) }) else {
            throw forbidden("\(message.verb.rawValue) of consumer \(name.prefix(64)) is not allowed for \(who()): "
                + "its consumer names are \(access.policy.namespaces(roles, client: userID))")
        }
    }

    private func forbidden(_ text: String) -> BusError {
        statistics.forbidden += 1
        return BusError(.forbidden, text)
    }

    /// One subscription message the XPUB passed up (first byte 1: subscribe, 0:
    /// unsubscribe): counted, and with keys applied as the sender's roles allow.
    func subscriptionChanged(_ frame: [UInt8], userID: String?) {
        guard let kind = frame.first else { return }
        // With keys, the XPUB is manual: only what the peer's roles allow is applied.
        if access != nil { applySubscription(frame, userID: userID) }
        if kind == 1 { statistics.streamSubscriptions += 1 } else if kind == 0 { statistics.streamSubscriptions -= 1 }
    }

    /// Applies one subscription message of the manual XPUB for the peer that
    /// sent it, narrowed to what its roles may see.
    ///
    /// A prefix is applied as is when every stage it can match is allowed;
    /// a prefix shorter than an allowed stage's `STAGE/` (the empty prefix,
    /// `o`) is narrowed to the allowed `STAGE/` prefixes it covers; any other
    /// is refused (not applied, counted as forbidden).
    func applySubscription(_ frame: [UInt8], userID: String?) {
        guard let access, let kind = frame.first, kind <= 1 else { return }
        let prefix = Array(frame.dropFirst())
        var allowed: Set<String>? = []
        for role in access.roles(of: userID) {
            guard let stages = access.policy.streamStages(role) else { allowed = nil; break }
            allowed?.formUnion(stages)
        }
        var applied: [[UInt8]] = []
        if let allowed {
            let matching = stagesMatching(prefix)
            if !matching.isEmpty && matching.isSubset(of: allowed) {
                applied = [prefix]
            } else {
                applied = allowed.sorted().map { Array($0.utf8) + [UInt8(ascii: "/")] }
                    .filter { $0.count > prefix.count && $0.starts(with: prefix) }
            }
        } else {
            applied = [prefix]
        }
        if applied.isEmpty {
            if kind == 1 {
                statistics.forbidden += 1
                logger.warning("stream subscription refused", metadata: [
                    "bus.client": "\(userID ?? "-")", "bus.prefix": "\(String(decoding: prefix.prefix(64), as: UTF8.self))",
                ])
            }
            return
        }
        for narrowed in applied {
            do {
                try output.subscribe(narrowed, kind == 1)
            } catch {
                logger.error("applying a stream subscription failed", metadata: ["error.type": "\(error)"])
            }
        }
    }
}
