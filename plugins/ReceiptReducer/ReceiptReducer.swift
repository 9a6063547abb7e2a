import EventBusCore

/// The receipt reducer: a pure, deterministic fold over ingress events
/// (docs/events.md "The receipt rules in plain words") that emits the egress events and answers the
/// `receipts` queries.
///
/// Counts come from structure, never from scans (docs/architecture.md "The receipt reducer"): per
/// channel, a Fenwick tree over countable messages and per-sender sorted
/// positions give `unread_messages` in O(log n); Fenwick trees over members'
/// read and delivered positions give read and delivered counts for any message
/// in O(log n); a chunked list of members by read recency pages through
/// readers newest first, walking from the newest and skipping non-readers
/// (``ReaderList``; O(log n + walked), O(n) at worst), a chunked sorted list
/// pages through members by user id (`channel_state`) in O(log n + page).
/// A user's `total_unread_count` and `unread_channels` are summed over their
/// channels when needed, O(channels × log n), so a `message.new` costs
/// O(log n) whatever the member count.
///
/// A value type: copies are cheap until written (copy-on-write arrays).
///
/// Where the rules leave a choice, the reducer decides (docs/events.md, "The
/// receipt rules in plain words"):
/// - Rejection precedence: `unknown_channel` > `not_member` > `banned` (acks only)
///   > `unknown_message` > `own_message`. `own_message` applies to `notification.mark_unread` only;
///   a read or delivered ack for one's own message is an ordinary ack (usually
///   "not forward", so nothing). `member.added`/`member.removed` for an unknown
///   channel are rejected `unknown_channel` too; removing a non-member does nothing.
/// - A `message.new` whose id the channel already has, and a second
///   `message.deleted` of a message, change nothing and emit nothing.
/// - Deleted messages stay in the sequence (they only stop counting): acks,
///   `mark_unread` and `message_receipts` still accept them.
/// - "Everything already read" for `notification.mark_read` means the read
///   watermark is at the latest message.
/// - Sending is not reading: a `message.new` moves no watermark of its sender.
/// - Each member has public watermarks (``MemberState``: what everyone else
///   sees, in events and replies) and, where they differ, own ones
///   (``OwnWatermarks``: their badge's). A mark unread moves only the own read
///   watermark back; an ack made while its receipt is hidden (the user's
///   setting or the channel type's toggle, in log order) moves only the own
///   watermark forward, and a read moves the public delivered watermark only
///   when both receipts are shown. The own read watermark drives the member's
///   counts, notifications and own `channel_state` entry.
/// - A member counts for the messages after the one that was latest when
///   they first joined (``MemberState/joinedAt``): for the earlier ones they
///   are neither a reader nor unread. Per channel the late joiners' join
///   positions are kept sorted, so a count takes them out in O(log n).
/// - Times: a member added later starts at the latest message with the
///   membership event's time; `mark_unread` sets the own `last_read` to its
///   event time. A member who has read nothing has `last_read` and
///   `last_read_message_id` null; after `mark_unread` from the first message,
///   the own `last_read_message_id` is null and `last_read` is the unread time.
/// - `message_receipts` readers are ordered newest first: by `last_read` (the
///   time their public read watermark last moved — a shown read or mark read,
///   joining), equal times by the order the reducer applied
///   those moves, later first (a per-channel read stamp). The cursor names the
///   last reader returned by (time, stamp). Each reader's `read_at` is when
///   their watermark passed the message (``Crossings``), as in the lists.
/// - `message_receipts` with a `list` (`read`, `delivered`, `unread`,
///   `undelivered`) pages through those members by user id (cursor
///   `u:<user_id>`, as `channel_state`), each reader or recipient with the
///   time their watermark passed the message: the first of its last three
///   moves forward to reach the message (``Crossings``), kept only for the
///   members with more to remember than their last move.
/// - Threads (`parent_id`) are kept apart from the channel: a reply the
///   channel does not show never counts in it, and each participant has
///   thread watermarks in a ``ThreadState`` that exists only once the thread
///   has a reply; acks naming a reply move those, never the channel's, and
///   a member who takes part in no thread moves nothing by acking its
///   replies. Thread counts are computed from the thread's replies,
///   O(replies after the watermark).
/// - `channel_state` is paged so that a reply fits the PUB batch limit for any
///   channel size: `page_size` 1–1000 (default 1000) members sorted by user id,
///   from after `cursor`; the opaque cursor is `u:<user_id>` of the last member
///   returned, `next_cursor` null after the last page. A member joining or
///   leaving between pages moves nobody else: no one present throughout is
///   skipped or repeated. `hidden_member_count` counts the members the view
///   hides on the whole channel (docs/events.md: "the members with anything hidden"),
///   so it is the same on every page; each view covers the same page.
/// - A deletion emits `message.deleted` to the channel, then a
///   `notification.message_deleted` to each member it was unread for: found
///   by one pass over the members, O(members). Every other change of a
///   user's counts that is not their own ack (membership, truncation, hiding,
///   a channel or user deleted) tells them too (docs/events.md rule 21).
/// - A channel's life (rules 20–23): a truncation marks its messages
///   deleted and forgets their ids (an empty id, rebuilding the id index,
///   O(n)); a hidden channel is a member flag that the next channel message
///   clears; a deleted channel leaves its place in ``channels`` empty (no
///   other index moves); a hard-deleted user's records are erased in place
///   (``MemberState/erased``) and their channel messages deleted.
public struct ReceiptReducer: Sendable {
    /// The time used when an input has neither an `*_at` nor an envelope time.
    public static let fallbackTime = "1970-01-01T00:00:00.000Z"

    /// Interned user ids.
    var users: [String] = []
    /// User id → index in ``users``.
    var userIndex: [String: UInt32] = [:]
    /// Channels each user is a member of now, by user index.
    var userChannels: [[Int32]] = []
    /// Channels by index.
    var channels: [ChannelState] = []
    /// cid → index in ``channels``.
    var channelIndex: [String: Int32] = [:]
    /// Time codes.
    var times = TimeTable()
    /// Privacy flags by user index (parallel to ``users``).
    var userFlags: [PrivacyFlags] = []
    /// Channel type → its toggles, for types with something off.
    var typeFlags: [String: PrivacyFlags] = [:]
    /// Users banned from acknowledging in every channel.
    var bannedEverywhere: Set<UInt32> = []
    /// In channels of at most this many members, every channel message sends each
    /// member it counts for their new counts (`notification.message_new`,
    /// docs/events.md rule 24); 0 sends none. Configuration, not state: not in snapshots.
    public var pushCountsUpTo = 0
    /// Message retention (docs/events.md rule 25): a channel keeps at least its newest
    /// `retainMessages` messages and forgets older ones once it holds an eighth more;
    /// 0 keeps every message. Configuration, not state: not in snapshots.
    public var retainMessages = ReceiptReducer.defaultRetention
    /// The default of ``retainMessages``.
    public static let defaultRetention = 100_000
    /// Rejections so far, by ``RejectionReason`` (in `allCases` order).
    var rejections: [UInt64] = Array(repeating: 0, count: RejectionReason.allCases.count)

    /// An empty reducer.
    public init() {}

    /// Applies one input and returns the events it causes, in order.
    ///
    /// Pure and deterministic: the same state and input always give the same
    /// state and outputs. `user.updated` and `channel_type.updated` produce
    /// nothing; the reducer tracks them, in log order, to prepare the redacted
    /// views of its replies (``answer(method:params:)``) for the privacy filters.
    public mutating func apply(_ input: ReducerInput) -> [ReducerOutput] {
        switch input.payload {
        case .channelCreated(let cid, let members):
            return channelCreated(input, cid: cid, members: members)
        case .memberAdded(let cid, let userID):
            return memberAdded(input, cid: cid, userID: userID)
        case .memberRemoved(let cid, let userID):
            return memberRemoved(input, cid: cid, userID: userID)
        case .memberUpdated(let cid, let userID, let muted, let countUnread):
            return memberUpdated(input, cid: cid, userID: userID, muted: muted, countUnread: countUnread)
        case .messageNew(let cid, let message):
            return messageNew(input, cid: cid, message: message)
        case .messageDeleted(let cid, let messageID):
            return messageDeleted(input, cid: cid, messageID: messageID)
        case .messageDelivered(let cid, let userID, let messageID, let deliveredAt):
            return messageDelivered(input, cid: cid, userID: userID, messageID: messageID, at: deliveredAt)
        case .messageRead(let cid, let userID, let messageID, let readAt):
            return messageRead(input, cid: cid, userID: userID, messageID: messageID, at: readAt)
        case .notificationMarkRead(let cid, let userID, let readAt):
            return markRead(input, cid: cid, userID: userID, at: readAt)
        case .notificationMarkUnread(let cid, let userID, let messageID):
            return markUnread(input, cid: cid, userID: userID, messageID: messageID)
        case .notificationMarkAllRead(let userID, let readAt):
            return markAllRead(input, userID: userID, at: readAt)
        case .userUpdated(let userID, let delivery, let read):
            return userUpdated(userID: userID, read: read, delivery: delivery)
        case .channelTypeUpdated(let name, let delivery, let read):
            return channelTypeUpdated(name: name, read: read, delivery: delivery)
        case .channelTruncated(let cid, let messageID):
            return channelTruncated(input, cid: cid, messageID: messageID)
        case .channelHidden(let cid, let userID, let clearHistory):
            return channelHidden(input, cid: cid, userID: userID, clearHistory: clearHistory)
        case .channelVisible(let cid, let userID):
            return channelVisible(input, cid: cid, userID: userID)
        case .channelDeleted(let cid):
            return channelDeleted(input, cid: cid)
        case .userDeleted(let userID, let hard):
            return userDeleted(input, userID: userID, hard: hard)
        case .userBanned(let userID, let cid):
            return userBanned(input, userID: userID, cid: cid, banned: true)
        case .userUnbanned(let userID, let cid):
            return userBanned(input, userID: userID, cid: cid, banned: false)
        }
    }

    // MARK: Interning

    /// The index of `userID`, interning it.
    mutating func intern(_ userID: String) -> UInt32 {
        if let index = userIndex[userID] { return index }
        let index = UInt32(users.count)
        precondition(index <= ChannelState.senderMask, "more than 2^29 users")
        users.append(userID)
        userFlags.append([])
        userIndex[userID] = index
        userChannels.append([])
        return index
    }

    /// The moment of an input: its `*_at` if given, else the envelope time, else ``fallbackTime``.
    mutating func timeCode(_ at: String?, _ input: ReducerInput) -> Int64 {
        times.encode(at ?? input.time ?? Self.fallbackTime)
    }

    // MARK: Introspection

    /// The number of channels.
    public var channelCount: Int { channels.count }

    /// The number of interned users.
    public var userCount: Int { users.count }

    /// How many inputs were rejected for `reason` so far.
    public func rejectedCount(_ reason: RejectionReason) -> UInt64 {
        // `allCases` holds every case, so the index exists.
        rejections[RejectionReason.allCases.firstIndex(of: reason)!]
    }

    /// The current members of `cid`, sorted; `nil` for an unknown channel.
    public func members(of cid: String) -> [String]? {
        guard let ci = channelIndex[cid] else { return nil }
        return channels[Int(ci)].members.filter(\.isMember).map { users[Int($0.user)] }.sorted()
    }

    /// The number of messages retained in `cid` (deleted ones included).
    public func messageCount(of cid: String) -> Int? {
        guard let ci = channelIndex[cid] else { return nil }
        return channels[Int(ci)].messageIDs.count
    }

    /// The public read watermark's message id of `userID` in `cid` (kept for
    /// removed members), what everyone else sees; `.some(nil)` when it is
    /// before the first message, `nil` when there is no record.
    public func readWatermark(cid: String, userID: String) -> String?? {
        guard let (channel, record) = record(cid: cid, userID: userID) else { return nil }
        return .some(channel.messageID(at: record.readPosition))
    }

    /// The member's own read watermark's message id (rules 6 and 18: their
    /// badge's), like ``readWatermark(cid:userID:)``.
    public func ownReadWatermark(cid: String, userID: String) -> String?? {
        guard let (channel, slot) = slot(cid: cid, userID: userID) else { return nil }
        return .some(channel.messageID(at: channel.ownReadPosition(slot)))
    }

    /// The delivered watermark's message id of `userID` in `cid`, like ``readWatermark(cid:userID:)``.
    public func deliveredWatermark(cid: String, userID: String) -> String?? {
        guard let (channel, record) = record(cid: cid, userID: userID) else { return nil }
        return .some(channel.messageID(at: record.deliveredPosition))
    }

    /// `unread_messages` of `userID` in `cid` (after their own read watermark; 0 while they hide
    /// the channel), `nil` without a record.
    public func unreadMessages(cid: String, userID: String) -> Int? {
        guard let (channel, slot) = slot(cid: cid, userID: userID) else { return nil }
        return channel.badge(slot).messages
    }

    /// `(total_unread_count, unread_channels)` of `userID` over their current channels.
    public func unreadTotals(userID: String) -> (total: Int, channels: Int) {
        guard let user = userIndex[userID] else { return (0, 0) }
        let totals = totals(user)
        return (totals.total, totals.channels)
    }

    /// `unread_mentions` of `userID` in `cid`, `nil` without a record.
    public func unreadMentions(cid: String, userID: String) -> Int? {
        guard let (channel, slot) = slot(cid: cid, userID: userID) else { return nil }
        return channel.badge(slot).mentions
    }

    /// `total_unread_mentions` of `userID` over their current channels.
    public func totalUnreadMentions(userID: String) -> Int {
        guard let user = userIndex[userID] else { return 0 }
        return totals(user).mentions
    }

    private func record(cid: String, userID: String) -> (ChannelState, MemberState)? {
        guard let (channel, slot) = slot(cid: cid, userID: userID) else { return nil }
        return (channel, channel.members[Int(slot)])
    }

    private func slot(cid: String, userID: String) -> (ChannelState, Int32)? {
        guard let ci = channelIndex[cid], let user = userIndex[userID] else { return nil }
        let channel = channels[Int(ci)]
        // An erased record (a hard-deleted user's) is no record.
        guard let slot = channel.slot(of: user), !channel.members[Int(slot)].erased else { return nil }
        return (channel, slot)
    }

    /// The unread totals of `user`: O(channels × log n), no allocation.
    func totals(_ user: UInt32) -> UnreadTotals {
        var totals = UnreadTotals()
        for ci in userChannels[Int(user)] {
            // userChannels lists only channels where the user has a current slot.
            // (`channels[ci]` each time: a local copy would retain every array of the channel.)
            let slot = channels[Int(ci)].slot(of: user)!
            let record = channels[Int(ci)].members[Int(slot)]
            guard record.countUnread != .off, !record.hidden else { continue }
            let mentions = channels[Int(ci)].unreadMentions(slot)
            // Muted and mentions-only channels add their mentions only.
            let counted = record.muted || record.countUnread == .mentions
                ? mentions : channels[Int(ci)].unreadMessages(slot, own: true)
            totals.total += counted
            if counted > 0 { totals.channels += 1 }
            totals.mentions += mentions
        }
        return totals
    }
}
