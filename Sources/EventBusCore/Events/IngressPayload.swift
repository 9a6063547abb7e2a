/// The typed `data` of an ingress event (docs/events.md, "Ingress events"), one case per type.
///
/// Times are kept as their validated RFC 3339 text; `nil` means the key was
/// omitted (the event's `time` or the broker's append time applies).
public enum IngressPayload: Sendable, Equatable, Hashable {
    /// `channel.created`: a channel and its initial members (repeats allowed).
    case channelCreated(cid: String, members: [String])
    /// `member.added`.
    case memberAdded(cid: String, userID: String)
    /// `member.removed`.
    case memberRemoved(cid: String, userID: String)
    /// `member.updated`: `userID`'s settings for the channel; `nil` where the key was omitted (keeps its value).
    case memberUpdated(cid: String, userID: String, muted: Bool?, countUnread: CountPreference?)
    /// `message.new`.
    case messageNew(cid: String, message: NewMessage)
    /// `message.deleted`.
    case messageDeleted(cid: String, messageID: String)
    /// `message.delivered`: a device of `userID` received messages up to `messageID`.
    case messageDelivered(cid: String, userID: String, messageID: String, deliveredAt: String?)
    /// `message.read`: `userID` read up to `messageID`.
    case messageRead(cid: String, userID: String, messageID: String, readAt: String?)
    /// `notification.mark_read`: `userID` read the whole channel.
    case notificationMarkRead(cid: String, userID: String, readAt: String?)
    /// `notification.mark_unread`: `userID` marks `messageID` and everything after it unread.
    case notificationMarkUnread(cid: String, userID: String, messageID: String)
    /// `notification.mark_all_read`: `userID` read every channel they are a member of.
    case notificationMarkAllRead(userID: String, readAt: String?)
    /// `user.updated`: privacy settings; `nil` where the key was omitted (keeps its value).
    case userUpdated(userID: String, deliveryReceipts: Bool?, readReceipts: Bool?)
    /// `channel_type.updated`: per channel type toggles; `nil` where omitted.
    case channelTypeUpdated(name: String, deliveryEvents: Bool?, readEvents: Bool?)
    /// `channel.truncated`: the history up to and including `messageID` is gone (all of it when `nil`).
    case channelTruncated(cid: String, messageID: String?)
    /// `channel.hidden`: `userID` hid the channel; with `clearHistory` its messages so far are read for them.
    case channelHidden(cid: String, userID: String, clearHistory: Bool)
    /// `channel.visible`: `userID` shows the channel again.
    case channelVisible(cid: String, userID: String)
    /// `channel.deleted`: the channel and everything about it is gone.
    case channelDeleted(cid: String)
    /// `user.deleted`: `userID` leaves every channel; `hard` deletes their messages too.
    case userDeleted(userID: String, hard: Bool)
    /// `user.banned`: `userID` may not acknowledge in `cid`, or anywhere when `nil`.
    case userBanned(userID: String, cid: String?)
    /// `user.unbanned`: lifts the ban of `userID` in `cid`, or the ban everywhere when `nil`.
    case userUnbanned(userID: String, cid: String?)

    /// The event type this payload belongs to.
    public var type: EventType {
        switch self {
        case .channelCreated: .channelCreated
        case .memberAdded: .memberAdded
        case .memberRemoved: .memberRemoved
        case .memberUpdated: .memberUpdated
        case .messageNew: .messageNew
        case .messageDeleted: .messageDeleted
        case .messageDelivered: .messageDelivered
        case .messageRead: .messageRead
        case .notificationMarkRead: .notificationMarkRead
        case .notificationMarkUnread: .notificationMarkUnread
        case .notificationMarkAllRead: .notificationMarkAllRead
        case .userUpdated: .userUpdated
        case .channelTypeUpdated: .channelTypeUpdated
        case .channelTruncated: .channelTruncated
        case .channelHidden: .channelHidden
        case .channelVisible: .channelVisible
        case .channelDeleted: .channelDeleted
        case .userDeleted: .userDeleted
        case .userBanned: .userBanned
        case .userUnbanned: .userUnbanned
        }
    }

    /// The channel id, for channel events (and a ban that names a channel); `nil` for
    /// `notification.mark_all_read`, `user.updated`, `channel_type.updated`, `user.deleted` and a
    /// ban everywhere.
    public var cid: String? {
        switch self {
        case .channelCreated(let cid, _), .memberAdded(let cid, _), .memberRemoved(let cid, _),
            .memberUpdated(let cid, _, _, _),
            .messageNew(let cid, _), .messageDeleted(let cid, _), .messageDelivered(let cid, _, _, _),
            .messageRead(let cid, _, _, _), .notificationMarkRead(let cid, _, _),
            .notificationMarkUnread(let cid, _, _), .channelTruncated(let cid, _), .channelHidden(let cid, _, _),
            .channelVisible(let cid, _), .channelDeleted(let cid):
            return cid
        case .userBanned(_, let cid), .userUnbanned(_, let cid):
            return cid
        case .notificationMarkAllRead, .userUpdated, .channelTypeUpdated, .userDeleted:
            return nil
        }
    }
}
