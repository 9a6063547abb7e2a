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
///
/// Each change of the user's membership is kept with its SEQ, so that an event of `out` is
/// judged by the membership at the SEQ that caused it (``contains(_:at:)``), which the pipeline
/// may have appended after later membership events. The changes are the user's own: a few
/// per channel they ever joined or left.
public struct UserChannels: Sendable, Equatable {
    /// The user.
    public let user: String
    /// Every channel that exists now: created and not deleted since.
    private var created: Set<String> = []
    /// For each channel the user ever joined, the SEQs at which they joined or left it, in
    /// order: the last says whether they are a member now.
    private var changes: [String: [Change]] = [:]

    /// The user joined (`member`) or left a channel with the event of SEQ `seq`.
    private struct Change: Sendable, Equatable {
        let seq: UInt64
        let member: Bool
    }

    /// The membership types, the only ones ``apply(type:event:seq:)`` reads.
    public static let types: Set<String> = ["channel.created", "member.added", "member.removed", "channel.deleted", "user.deleted"]

    public init(user: String) {
        self.user = user
    }

    /// The channels the user is a member of now.
    public var channels: Set<String> { Set(changes.compactMap { $0.value.last?.member == true ? $0.key : nil }) }

    /// Whether the user is a member of `cid` now.
    public func contains(_ cid: String) -> Bool { changes[cid]?.last?.member ?? false }

    /// Whether the user was a member of `cid` once the events up to SEQ `seq` were applied.
    public func contains(_ cid: String, at seq: UInt64) -> Bool {
        guard let changes = changes[cid] else { return false }
        // The last change at or before `seq`: the changes are few, newest last.
        return changes.last { $0.seq <= seq }?.member ?? false
    }

    /// Applies the event of SEQ `seq` of stage `in`, of type `type`; other types change nothing.
    /// SEQs must rise from one call to the next.
    public mutating func apply(type: String, event: [UInt8], seq: UInt64) {
        // An event that does not parse or lacks a field is one the reducer rejects too.
        guard Self.types.contains(type), let data = (try? JSONParser.parse(event))?["data"] else { return }
        if type == "user.deleted" {
            if data["user_id"]?.stringValue == user {
                for cid in channels { leave(cid, at: seq) }
            }
            return
        }
        guard let cid = data["cid"]?.stringValue else { return }
        switch type {
        case "channel.created":
            created.insert(cid)
            if case .array(let members)? = data["members"], members.contains(where: { $0.stringValue == user }) {
                join(cid, at: seq)
            }
        case "member.added":
            if created.contains(cid), data["user_id"]?.stringValue == user { join(cid, at: seq) }
        case "member.removed":
            if data["user_id"]?.stringValue == user { leave(cid, at: seq) }
        case "channel.deleted":
            created.remove(cid)
            leave(cid, at: seq)
        default:
            break
        }
    }

    private mutating func join(_ cid: String, at seq: UInt64) {
        guard !contains(cid) else { return }
        changes[cid, default: []].append(Change(seq: seq, member: true))
    }

    private mutating func leave(_ cid: String, at seq: UInt64) {
        guard contains(cid) else { return }
        changes[cid, default: []].append(Change(seq: seq, member: false))
    }
}
