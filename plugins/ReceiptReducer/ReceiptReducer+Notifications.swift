import EventBusCore

/// The `notification.*` events that tell a user's devices their new counts
/// when something other than their own ack changed them (docs/events.md rule
/// 21): a member added or removed, a message deleted, a channel truncated,
/// hidden, shown or deleted, a user deleted with their messages.
extension ReceiptReducer {
    /// What changed a user's counts, as the `notification.*` type it sends.
    enum CountsCause: String {
        case addedToChannel = "notification.added_to_channel"
        case removedFromChannel = "notification.removed_from_channel"
        case messageDeleted = "notification.message_deleted"
        case channelTruncated = "notification.channel_truncated"
        case channelHidden = "notification.channel_hidden"
        case channelVisible = "notification.channel_visible"
        case channelDeleted = "notification.channel_deleted"
        case userDeleted = "notification.user_deleted"
        case messageNew = "notification.message_new"
    }

    /// Rule 24: after a channel message at `position`, each current member it
    /// counts for (not its sender; it counts: regular, not silent) gets their new
    /// counts, by user id, when the channel has at most ``pushCountsUpTo``
    /// members. O(members × log n).
    func messageNewNotices(_ ci: Int, position: Int32, messageID: String) -> [ReducerOutput] {
        guard pushCountsUpTo > 0, channels[ci].memberCount <= pushCountsUpTo else { return [] }
        let info = channels[ci].messageInfo[Int(position)]
        guard ChannelState.isCountable(info), channels[ci].inChannel(position) else { return [] }
        let sender = info & ChannelState.senderMask
        let cid = channels[ci].cid
        return channels[ci].members.indices
            .filter { channels[ci].members[$0].isMember && channels[ci].members[$0].user != sender }
            .sorted { users[Int(channels[ci].members[$0].user)] < users[Int(channels[ci].members[$1].user)] }
            .map { i in
                countsEvent(.messageNew, cid: cid, user: channels[ci].members[i].user, ci: ci, slot: Int32(i)) { writer in
                    writer.key(plain: "message_id"); writer.string(messageID)
                }
            }
    }

    /// A `notification.*` to `user`'s devices (`@<user_id>`): `cid`, `user_id`,
    /// the cause's own fields (`extra`), then, while they are a member (`slot`),
    /// the channel's `unread_messages` and `unread_mentions`, then their totals.
    func countsEvent(
        _ cause: CountsCause, cid: String, user: UInt32, ci: Int, slot: Int32?,
        extra: (inout JSONWriter) -> Void = { _ in }
    ) -> ReducerOutput {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.key(plain: "cid"); writer.string(cid)
        writer.key(plain: "user_id"); writer.string(users[Int(user)])
        extra(&writer)
        if let slot {
            writeCounts(&writer, ci, slot, totals(user))
        } else {
            writeTotals(&writer, totals(user))
        }
        writer.endObject()
        return ReducerOutput(stage: "out", type: cause.rawValue, subject: "@" + users[Int(user)], data: writer.takeBytes())
    }

    /// The current members of channel `ci` and their badges, by user id: to
    /// compare before and after a change. O(members × log n).
    func badges(_ ci: Int) -> [(user: UInt32, slot: Int32, badge: (messages: Int, mentions: Int))] {
        channels[ci].members.indices.compactMap { i -> (UInt32, Int32, (Int, Int))? in
            let record = channels[ci].members[i]
            guard record.isMember else { return nil }
            return (record.user, Int32(i), channels[ci].badge(Int32(i)))
        }
        .sorted { users[Int($0.0)] < users[Int($1.0)] }
    }

    /// A `notification.*` of `cause` to each member of `ci` whose badge differs
    /// from `before` (``badges(_:)`` taken before the change), by user id.
    func notifyChanged(
        _ cause: CountsCause, _ ci: Int, before: [(user: UInt32, slot: Int32, badge: (messages: Int, mentions: Int))],
        extra: (inout JSONWriter) -> Void = { _ in }
    ) -> [ReducerOutput] {
        before.compactMap { entry in
            let now = channels[ci].badge(entry.slot)
            guard channels[ci].members[Int(entry.slot)].isMember, now != entry.badge else { return nil }
            return countsEvent(cause, cid: channels[ci].cid, user: entry.user, ci: ci, slot: entry.slot, extra: extra)
        }
    }
}
