import EventBus
import ZeroMQ

extension BrokerCore {
    /// Refuses `message` with `forbidden` when its sender's roles do not allow it
    /// (``BrokerAccess/authorize(_:userID:)``), counted in STATS.
    /// Without keys configured every peer may do everything.
    func authorize(_ message: CommandMessage, userID: String?) throws(BusError) {
        guard let access else { return }
        do {
            try access.authorize(message, userID: userID)
        } catch {
            if error.code == .forbidden { statistics.forbidden += 1 }
            throw error
        }
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
