import EventBusCore

/// Acks of thread replies and their events (docs/events.md rules 14–17): an
/// ack naming a reply moves the participant's thread watermark, never the
/// channel's; a member who does not take part in the thread moves nothing.
extension ReceiptReducer {
    /// `message.read` of a reply: the participant's own thread read watermark
    /// forward and, if the read is shown, the public one (delivered with it
    /// when delivery receipts are shown too), as for a channel (rules 18, 19).
    mutating func threadRead(_ ci: Int, _ t: Int, _ user: UInt32, to position: Int32, time: Int64, seq: UInt64)
        -> [ReducerOutput]
    {
        guard let i = channels[ci].threads[t].participant(user) else { return [] }
        let record = channels[ci].threads[t].participants[i]
        let ownMoved = position > record.ownRead
        guard ownMoved || position > record.readPosition else { return [] }
        if ownMoved {
            channels[ci].threads[t].participants[i].ownRead = position
            channels[ci].threads[t].participants[i].ownReadTime = time
            channels[ci].threads[t].participants[i].ownDelivered = max(record.ownDelivered, position)
        }
        var outputs: [ReducerOutput] = []
        if position > record.readPosition {
            if shows(.readOff, ci, user) {
                channels[ci].setThreadRead(t, i, to: position, time: time)
                if shows(.deliveryOff, ci, user) { channels[ci].setThreadDelivered(t, i, to: position, time: time) }
                outputs.append(threadWatermarkEvent(ci, t, user, .messageRead, position: position, time: time))
            } else if ownMoved {
                // Hidden (rule 19): the public watermarks stay, and nobody is told but the audit.
                outputs.append(suppressedEvent(seq: seq, ci, user, .messageRead))
            }
        }
        if ownMoved {
            outputs.append(threadNotification(ci, t, channels[ci].threads[t].participants[i], type: .notificationMarkRead,
                                              firstUnread: nil))
        }
        return outputs
    }

    /// `message.delivered` of a reply: the own thread delivered watermark
    /// forward and, if delivery receipts are shown, the public one.
    mutating func threadDelivered(_ ci: Int, _ t: Int, _ user: UInt32, to position: Int32, time: Int64, seq: UInt64)
        -> [ReducerOutput]
    {
        guard let i = channels[ci].threads[t].participant(user) else { return [] }
        let record = channels[ci].threads[t].participants[i]
        let ownMoved = position > record.ownDelivered
        if ownMoved { channels[ci].threads[t].participants[i].ownDelivered = position }
        guard position > record.deliveredPosition, ownMoved || shows(.deliveryOff, ci, user) else { return [] }
        guard shows(.deliveryOff, ci, user) else { return [suppressedEvent(seq: seq, ci, user, .messageDelivered)] }
        channels[ci].setThreadDelivered(t, i, to: position, time: time)
        return [threadWatermarkEvent(ci, t, user, .messageDelivered, position: position, time: time)]
    }

    /// `notification.mark_unread` of a reply: the own thread read watermark
    /// back to the thread message before it; private (rule 6).
    mutating func threadMarkUnread(_ ci: Int, _ t: Int, _ user: UInt32, from position: Int32, time: Int64)
        -> [ReducerOutput]
    {
        let target = channels[ci].threads[t].message(before: position)
        guard let i = channels[ci].threads[t].participant(user),
            target < channels[ci].threads[t].participants[i].ownRead
        else { return [] }
        channels[ci].threads[t].participants[i].ownRead = target
        channels[ci].threads[t].participants[i].ownReadTime = time
        let record = channels[ci].threads[t].participants[i]
        return [threadNotification(ci, t, record, type: .notificationMarkUnread, firstUnread: position)]
    }

    // MARK: Counts

    /// The threads with unread replies for `user` in channel `ci` (as a current member), by parent position.
    func unreadThreads(_ ci: Int, _ user: UInt32) -> [Int] {
        guard let indices = channels[ci].participation[user] else { return [] }
        var result: [Int] = []
        for t in indices.map({ Int($0) }) {
            // participation lists only threads where the user has a record.
            let record = channels[ci].threads[t].participants[channels[ci].threads[t].participant(user)!]
            if channels[ci].unreadReplies(t, after: record.ownRead, user: user) > 0 { result.append(t) }
        }
        return result.sorted { channels[ci].threads[$0].parent < channels[ci].threads[$1].parent }
    }

    /// `unread_threads` of `user`: their threads with unread replies over the channels they are a member of now.
    func unreadThreadCount(_ user: UInt32) -> Int {
        userChannels[Int(user)].reduce(0) { $0 + unreadThreads(Int($1), user).count }
    }

    // MARK: Events

    /// `message.read` or `message.delivered` of a thread to the channel:
    /// `cid`, `user_id`, `parent_id`, the watermark's message id and time, and
    /// that reply's counts (rule 26).
    private func threadWatermarkEvent(_ ci: Int, _ t: Int, _ user: UInt32, _ type: EventType, position: Int32, time: Int64)
        -> ReducerOutput
    {
        let read = type == .messageRead
        var writer = JSONWriter(capacity: 192)
        writer.beginObject()
        writer.key(plain: "cid"); writer.string(channels[ci].cid)
        writer.key(plain: "user_id"); writer.string(users[Int(user)])
        writer.key(plain: "parent_id"); writer.string(channels[ci].messageIDs[Int(channels[ci].threads[t].parent)])
        let messageID = channels[ci].threadMessageID(t, at: position)
        writer.key(read ? "last_read_message_id" : "last_delivered_message_id")
        writer.string(orNull: messageID)
        writer.key(read ? "last_read" : "last_delivered_at")
        times.write(time, to: &writer)
        if messageID != nil { writeReceiptCounts(&writer, ci, position: position, read: read) }
        writer.endObject()
        return ReducerOutput(stage: "out", type: type.wireName, subject: channels[ci].cid, data: writer.bytes)
    }

    /// `notification.mark_read` or `notification.mark_unread` of a thread to
    /// the user's own devices: `cid`, `user_id`, `parent_id`,
    /// (`first_unread_message_id`,) their own read watermark and its time, the
    /// thread's `unread_replies` and the user's `unread_threads`.
    private func threadNotification(_ ci: Int, _ t: Int, _ record: ThreadMember, type: EventType, firstUnread: Int32?)
        -> ReducerOutput
    {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.key(plain: "cid"); writer.string(channels[ci].cid)
        writer.key(plain: "user_id"); writer.string(users[Int(record.user)])
        writer.key(plain: "parent_id"); writer.string(channels[ci].messageIDs[Int(channels[ci].threads[t].parent)])
        if let firstUnread {
            writer.key(plain: "first_unread_message_id"); writer.string(channels[ci].messageIDs[Int(firstUnread)])
        }
        writer.key(plain: "last_read_message_id"); writer.string(orNull: channels[ci].threadMessageID(t, at: record.ownRead))
        writer.key(plain: "last_read"); times.write(record.ownReadTime, to: &writer)
        writer.key(plain: "unread_replies")
        writer.int(channels[ci].unreadReplies(t, after: record.ownRead, user: record.user))
        writer.key(plain: "unread_threads"); writer.int(unreadThreadCount(record.user))
        writer.endObject()
        return ReducerOutput(stage: "out", type: type.wireName, subject: "@" + users[Int(record.user)], data: writer.bytes)
    }
}
