import EventBus

/// The channels one user is a member of, following the membership events of stage `in`
/// in log order, as the receipt reducer does (docs/events.md, section 2):
///
/// - `channel.created` makes the channel known and adds the members it names (a repeat
///   adds missing ones, it never removes);
/// - `member.added` adds its user to a known channel (the reducer rejects one for a channel
///   never created, so it adds nothing here either);
/// - `member.removed` takes its user out;
/// - `channel.deleted` ends every membership of the channel and forgets it: a `member.added`
///   to it is not counted until a `channel.created` makes the cid again, afresh, with only
///   the members that one names (rule 20's "created again, afresh");
/// - `user.deleted` of the user takes them out of every channel (rule 22, soft or hard); a
///   later `channel.created` or `member.added` naming them counts again, as for the reducer.
///
/// Only the user's own channels are kept, and the names of the channels that exist, so that
/// a `member.added` for a channel not created (yet, or again) is not counted.
public struct UserChannels: Sendable, Equatable {
    /// The user.
    public let user: String
    /// The channels the user is a member of now.
    public private(set) var channels: Set<String> = []
    /// Every channel that exists now: created and not deleted since.
    private var created: Set<String> = []

    /// The membership types, the only ones ``apply(type:event:)`` reads.
    public static let types: Set<String> = ["channel.created", "member.added", "member.removed", "channel.deleted", "user.deleted"]

    public init(user: String) {
        self.user = user
    }

    /// Whether the user is a member of `cid` now.
    public func contains(_ cid: String) -> Bool { channels.contains(cid) }

    /// Applies one event of stage `in` of type `type`; other types change nothing.
    public mutating func apply(type: String, event: [UInt8]) {
        guard Self.types.contains(type), let data = (try? JSONParser.parse(event))?["data"] else { return }
        if type == "user.deleted" {
            if data["user_id"]?.stringValue == user { channels.removeAll() }
            return
        }
        guard let cid = data["cid"]?.stringValue else { return }
        switch type {
        case "channel.created":
            created.insert(cid)
            if case .array(let members)? = data["members"], members.contains(where: { $0.stringValue == user }) {
                channels.insert(cid)
            }
        case "member.added":
            if created.contains(cid), data["user_id"]?.stringValue == user { channels.insert(cid) }
        case "member.removed":
            if data["user_id"]?.stringValue == user { channels.remove(cid) }
        case "channel.deleted":
            created.remove(cid)
            channels.remove(cid)
        default:
            break
        }
    }
}
