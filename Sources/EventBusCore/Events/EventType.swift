/// The event types the bus knows, with their wire names.
///
/// Ingress types are published by backends to stage `in` (docs/events.md,
/// "Ingress events"); `receipt.rejected` and `receipt.suppressed` are only ever emitted
/// by plugins; `query` and `reply` carry requests and their answers through the
/// pipeline. Events of other (valid) type names may travel the stages after
/// `in`, so an envelope keeps its type as a string and this enum is a lookup.
public enum EventType: String, Sendable, CaseIterable, Hashable {
    /// A channel and its initial members.
    case channelCreated = "channel.created"
    /// A member joined a channel.
    case memberAdded = "member.added"
    /// A member left a channel.
    case memberRemoved = "member.removed"
    /// A member's settings for a channel: muted, what counts as unread.
    case memberUpdated = "member.updated"
    /// A message was sent.
    case messageNew = "message.new"
    /// A message was deleted.
    case messageDeleted = "message.deleted"
    /// A device of a user received messages up to one.
    case messageDelivered = "message.delivered"
    /// A user read up to a message.
    case messageRead = "message.read"
    /// A user read a whole channel.
    case notificationMarkRead = "notification.mark_read"
    /// A user marked a message and everything after it unread.
    case notificationMarkUnread = "notification.mark_unread"
    /// A user read every channel they are a member of.
    case notificationMarkAllRead = "notification.mark_all_read"
    /// A user's privacy settings changed.
    case userUpdated = "user.updated"
    /// A channel type's receipt toggles changed.
    case channelTypeUpdated = "channel_type.updated"
    /// A channel's history up to a message (or all of it) is gone for everyone.
    case channelTruncated = "channel.truncated"
    /// A member hid a channel (Stream's hide): no unread for them until a new message.
    case channelHidden = "channel.hidden"
    /// A member showed a hidden channel again.
    case channelVisible = "channel.visible"
    /// A channel and everything about it is gone; its cid may be created again.
    case channelDeleted = "channel.deleted"
    /// A user left for good: removed from every channel, their messages deleted too if hard.
    case userDeleted = "user.deleted"
    /// A user may no longer acknowledge, in one channel or in every channel.
    case userBanned = "user.banned"
    /// A ban is lifted.
    case userUnbanned = "user.unbanned"
    /// An ack that could not apply (stage `diag`).
    case receiptRejected = "receipt.rejected"
    /// An egress event a privacy filter held back (stage `diag`).
    case receiptSuppressed = "receipt.suppressed"
    /// A REQ turned into an event by the broker.
    case query
    /// A service's answer to a `query`.
    case reply

    /// Looks up a wire name; `nil` for a type the catalogue does not know.
    public init?(wireName: String) {
        self.init(rawValue: wireName)
    }

    /// The type's name on the wire, as in the envelope's `type` and the topic.
    public var wireName: String { rawValue }

    /// Whether backends may publish this type to stage `in`.
    public var isIngress: Bool {
        switch self {
        case .channelCreated, .memberAdded, .memberRemoved, .memberUpdated, .messageNew, .messageDeleted,
            .messageDelivered, .messageRead, .notificationMarkRead, .notificationMarkUnread, .notificationMarkAllRead,
            .userUpdated, .channelTypeUpdated, .channelTruncated, .channelHidden, .channelVisible, .channelDeleted,
            .userDeleted, .userBanned, .userUnbanned:
            return true
        case .receiptRejected, .receiptSuppressed, .query, .reply:
            return false
        }
    }

    /// The type named by `name`'s bytes, found without making a string: `init(rawValue:)` on a
    /// string hashes it for a lookup, once per event in a plugin's loop.
    package static func named(_ name: UnsafeBufferPointer<UInt8>) -> EventType? {
        names.index(of: name).map { all[$0] }
    }

    /// ``allCases`` made once (the synthesized property builds its array at every call), and their raw values.
    private static let all = allCases
    private static let names = TypeNameSet(all.map { Array($0.rawValue.utf8) })

    /// Whether the type is private: settings, membership and a channel's or
    /// user's life, never delivered to consumers of `out` or to stream
    /// subscribers (the reducer tells the users concerned with `notification.*`).
    public var isPrivate: Bool {
        switch self {
        case .channelCreated, .memberAdded, .memberRemoved, .memberUpdated, .userUpdated, .channelTypeUpdated,
            .channelTruncated, .channelHidden, .channelVisible, .channelDeleted, .userDeleted, .userBanned, .userUnbanned:
            return true
        default:
            return false
        }
    }

    /// Whether the event's subject is a channel id that must equal `data.cid`
    /// (a ban's is, when it names a channel).
    public var isChannelEvent: Bool {
        switch self {
        case .userUpdated, .channelTypeUpdated, .notificationMarkAllRead, .userDeleted, .userBanned, .userUnbanned:
            false
        default:
            isIngress
        }
    }
}
