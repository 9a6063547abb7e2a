import EventBus
import Logging

/// The gateway's view of who is in which channel.
///
/// Membership events (`channel.created`, `member.added`, `member.removed`) are private:
/// the broker never delivers them to consumers of `out`. The gateway therefore reads them
/// from stage `in` (same durable consumer, same log order) and, the first time it meets a
/// channel (after a start or restart), loads the channel's current members from a
/// ``MembershipSource`` (the reducer's `channel_state`) before applying later changes.
public actor Membership {
    private var channels: [String: Set<String>] = [:]
    private let source: any MembershipSource
    private let logger: Logger

    /// Creates an empty view that loads unknown channels from `source`.
    public init(source: any MembershipSource, logger: Logger = Logger(label: "chat-gateway.membership")) {
        self.source = source
        self.logger = logger
    }

    /// The members of `cid`, loading them on first use.
    public func members(of cid: String) async -> Set<String> {
        if let known = channels[cid] { return known }
        do {
            let loaded = try await source.members(of: cid)
            // Another call may have filled it in meanwhile: keep the union.
            let merged = loaded.union(channels[cid] ?? [])
            channels[cid] = merged
            return merged
        } catch {
            logger.warning("could not load the members of a channel", metadata: ["chat.cid": "\(cid)", "error": "\(error)"])
            return []
        }
    }

    /// Whether `user` is a member of `cid`.
    public func contains(_ user: String, in cid: String) async -> Bool {
        await members(of: cid).contains(user)
    }

    /// Applies a membership event read from stage `in`; other events are ignored.
    ///
    /// - Parameter event: The CloudEvents JSON.
    public func apply(event: [UInt8]) async {
        guard let json = try? JSONParser.parse(event), let type = json["type"]?.stringValue,
              let data = json["data"], let cid = data["cid"]?.stringValue else { return }
        switch type {
        case "channel.created":
            var members = await members(of: cid)
            if case .array(let names)? = data["members"] {
                for name in names { if let user = name.stringValue { members.insert(user) } }
            }
            channels[cid] = members
        case "member.added":
            guard let user = data["user_id"]?.stringValue else { return }
            var members = await members(of: cid)
            members.insert(user)
            channels[cid] = members
        case "member.removed":
            guard let user = data["user_id"]?.stringValue else { return }
            var members = await members(of: cid)
            members.remove(user)
            channels[cid] = members
        default:
            return
        }
    }
}
