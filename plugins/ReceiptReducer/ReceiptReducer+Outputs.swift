import EventBusCore

/// The egress and diagnostic events (docs/events.md "Egress events", rule 5), written as bytes.
extension ReceiptReducer {
    /// Counts a rejection and returns its `receipt.rejected` event:
    /// data `{seq, type, cid, user_id?, message_id?, reason}`, subject the cid.
    mutating func reject(
        _ input: ReducerInput, cid: String, userID: String?, messageID: String?, _ reason: RejectionReason
    ) -> ReducerOutput {
        // `allCases` holds every case, so the index exists.
        rejections[RejectionReason.allCases.firstIndex(of: reason)!] += 1
        var writer = JSONWriter(capacity: 160)
        writer.beginObject()
        writer.key("seq"); writer.uint(input.seq)
        writer.key("type"); writer.string(input.payload.type.wireName)
        writer.key("cid"); writer.string(cid)
        if let userID { writer.key("user_id"); writer.string(userID) }
        if let messageID { writer.key("message_id"); writer.string(messageID) }
        writer.key("reason"); writer.string(reason.rawValue)
        writer.endObject()
        return ReducerOutput(
            stage: "diag", type: EventType.receiptRejected.wireName, subject: cid, data: writer.takeBytes())
    }

    /// A `message.new` data object written from the payload (when the original is not at hand).
    static func messageNewData(cid: String, message: NewMessage) -> [UInt8] {
        var writer = JSONWriter(capacity: 192)
        writer.beginObject()
        writer.key("cid"); writer.string(cid)
        writer.key("message")
        writer.beginObject()
        writer.key("id"); writer.string(message.id)
        writer.key("user_id"); writer.string(message.userID)
        writer.key("created_at"); writer.string(message.createdAt)
        writer.key("type"); writer.string(message.kind.rawValue)
        writer.key("silent"); writer.bool(message.silent)
        if !message.mentionedUsers.isEmpty {
            writer.key("mentioned_users")
            writer.beginArray()
            for userID in message.mentionedUsers { writer.string(userID) }
            writer.endArray()
        }
        if let parentID = message.parentID {
            writer.key("parent_id"); writer.string(parentID)
            writer.key("show_in_channel"); writer.bool(message.showInChannel)
        }
        writer.endObject()
        writer.endObject()
        return writer.takeBytes()
    }

    /// `message.delivered` to the channel.
    func deliveredEvent(_ ci: Int, _ slot: Int32) -> ReducerOutput {
        let record = channels[ci].members[Int(slot)]
        return watermarkEvent(ci, record.user, type: .messageDelivered, idKey: "last_delivered_message_id",
                              timeKey: "last_delivered_at", position: record.deliveredPosition, time: record.deliveredTime)
    }

    /// `message.read` to the channel.
    func readEvent(_ ci: Int, _ slot: Int32) -> ReducerOutput {
        let record = channels[ci].members[Int(slot)]
        return watermarkEvent(ci, record.user, type: .messageRead, idKey: "last_read_message_id",
                              timeKey: "last_read", position: record.readPosition, time: record.readTime)
    }

    /// The audit of an ack made while that receipt is hidden (rule 19): the
    /// public watermark did not move, so no `message.read` / `message.delivered`
    /// goes out; instead a `receipt.suppressed` on `diag`, as a privacy
    /// filter writes it (`{seq, type, reason, policy}`, nothing of the
    /// payload; the user's setting is reported first).
    func suppressedEvent(seq: UInt64, _ ci: Int, _ user: UInt32, _ type: EventType) -> ReducerOutput {
        let flag: PrivacyFlags = type == .messageRead ? .readOff : .deliveryOff
        var writer = JSONWriter(capacity: 112)
        writer.beginObject()
        writer.key(plain: "seq"); writer.uint(seq)
        writer.key(plain: "type"); writer.string(type.wireName)
        writer.key(plain: "reason"); writer.string(userFlags[Int(user)].contains(flag) ? "user_setting" : "channel_type")
        writer.key(plain: "policy"); writer.string(type == .messageRead ? "read-privacy" : "delivery-privacy")
        writer.endObject()
        return ReducerOutput(
            stage: "diag", type: EventType.receiptSuppressed.wireName, subject: channels[ci].cid, data: writer.takeBytes())
    }

    // The events below read the channel through `channels[ci]` each time: a
    // `let channel = channels[ci]` would copy the channel's state (a retain and
    // a release of each of its arrays and tables) for every event written.

    /// A watermark event to the channel: `cid`, `user_id`, the watermark's
    /// message id and time, and that message's counts (rule 26).
    private func watermarkEvent(
        _ ci: Int, _ user: UInt32, type: EventType, idKey: StaticString, timeKey: StaticString, position: Int32, time: Int64
    ) -> ReducerOutput {
        var writer = JSONWriter(capacity: 160)
        writer.beginObject()
        writer.key(plain: "cid"); writer.string(channels[ci].cid)
        writer.key(plain: "user_id"); writer.string(users[Int(user)])
        let messageID = channels[ci].messageID(at: position)
        writer.key(plain: idKey); writer.string(orNull: messageID)
        writer.key(plain: timeKey); times.write(time, to: &writer)
        if messageID != nil { writeReceiptCounts(&writer, ci, position: position, read: type == .messageRead) }
        writer.endObject()
        return ReducerOutput(stage: "out", type: type.wireName, subject: channels[ci].cid, data: writer.takeBytes())
    }

    /// The counts closing a `notification.*`: the channel's `unread_messages`
    /// and `unread_mentions`, then the user's totals.
    func writeCounts(_ writer: inout JSONWriter, _ ci: Int, _ slot: Int32, _ totals: UnreadTotals) {
        let badge = channels[ci].badge(slot)
        writer.key(plain: "unread_messages"); writer.int(badge.messages)
        writer.key(plain: "unread_mentions"); writer.int(badge.mentions)
        writeTotals(&writer, totals)
    }

    /// The user's totals closing a `notification.*`.
    func writeTotals(_ writer: inout JSONWriter, _ totals: UnreadTotals) {
        writer.key(plain: "unread_channels"); writer.int(totals.channels)
        writer.key(plain: "total_unread_count"); writer.int(totals.total)
        writer.key(plain: "total_unread_mentions"); writer.int(totals.mentions)
    }

    /// `notification.mark_read` to the reader's own devices (`@<user_id>`),
    /// with their own read watermark and counts.
    func markReadEvent(_ ci: Int, _ slot: Int32, _ user: UInt32) -> ReducerOutput {
        let own = channels[ci].ownWatermarks(slot)
        let totals = totals(user)
        var writer = JSONWriter(capacity: 320)
        writer.beginObject()
        writer.key(plain: "cid"); writer.string(channels[ci].cid)
        writer.key(plain: "user_id"); writer.string(users[Int(user)])
        writer.key(plain: "last_read_message_id"); writer.string(orNull: channels[ci].messageID(at: own.readPosition))
        writer.key(plain: "last_read"); times.write(own.readTime, to: &writer)
        writeCounts(&writer, ci, slot, totals)
        writer.endObject()
        return ReducerOutput(
            stage: "out", type: EventType.notificationMarkRead.wireName, subject: "@" + users[Int(user)],
            data: writer.takeBytes())
    }

    /// `notification.mark_all_read` to the user's own devices (`@<user_id>`):
    /// `user_id`, `last_read` (the time of the mark), then the user's totals.
    func markAllReadEvent(_ userID: String, time: Int64, _ totals: UnreadTotals) -> ReducerOutput {
        var writer = JSONWriter(capacity: 192)
        writer.beginObject()
        writer.key(plain: "user_id"); writer.string(userID)
        writer.key(plain: "last_read"); times.write(time, to: &writer)
        writer.key(plain: "unread_channels"); writer.int(totals.channels)
        writer.key(plain: "total_unread_count"); writer.int(totals.total)
        writer.key(plain: "total_unread_mentions"); writer.int(totals.mentions)
        writer.endObject()
        return ReducerOutput(
            stage: "out", type: EventType.notificationMarkAllRead.wireName, subject: "@" + userID, data: writer.takeBytes())
    }

    /// `notification.mark_unread` to the user's own devices (`@<user_id>`),
    /// with their own read watermark and counts.
    func markUnreadEvent(_ ci: Int, _ slot: Int32, _ user: UInt32, firstUnread: Int32) -> ReducerOutput {
        let own = channels[ci].ownWatermarks(slot)
        let totals = totals(user)
        var writer = JSONWriter(capacity: 352)
        writer.beginObject()
        writer.key(plain: "cid"); writer.string(channels[ci].cid)
        writer.key(plain: "user_id"); writer.string(users[Int(user)])
        writer.key(plain: "first_unread_message_id"); writer.string(channels[ci].messageIDs[Int(firstUnread)])
        writer.key(plain: "last_read_message_id"); writer.string(orNull: channels[ci].messageID(at: own.readPosition))
        writer.key(plain: "last_read"); times.write(own.readTime, to: &writer)
        writeCounts(&writer, ci, slot, totals)
        writer.endObject()
        return ReducerOutput(
            stage: "out", type: EventType.notificationMarkUnread.wireName, subject: "@" + users[Int(user)],
            data: writer.takeBytes())
    }
}
