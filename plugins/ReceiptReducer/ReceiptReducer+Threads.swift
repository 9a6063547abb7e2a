import EventBusCore

/// Acks of thread replies and their events (docs/events.md rules 14–17): an
/// ack naming a reply moves the participant's thread watermark, never the
/// channel's; a member who does not take part in the thread moves nothing.
extension ReceiptReducer {
    /// `message.read` of a reply: the thread read watermark forward (delivered with it).
    mutating func threadRead(_ ci: Int, _ t: Int, _ user: UInt32, to position: Int32, time: Int64) -> [ReducerOutput] {
        guard let i = channels[ci].threads[t].participant(user),
            position > channels[ci].threads[t].participants[i].readPosition
        else { return [] }
        channels[ci].setThreadRead(t, i, to: position, time: time)
        channels[ci].setThreadDelivered(t, i, to: position, time: time)
        let record = channels[ci].threads[t].participants[i]
        return [
            threadWatermarkEvent(ci, t, record, type: .messageRead),
            threadNotification(ci, t, record, type: .notificationMarkRead, firstUnread: nil),
        ]
    }

    /// `message.delivered` of a reply: the thread delivered watermark forward.
    mutating func threadDelivered(_ ci: Int, _ t: Int, _ user: UInt32, to position: Int32, time: Int64)
        -> [ReducerOutput]
    {
        guard let i = channels[ci].threads[t].participant(user),
            position > channels[ci].threads[t].participants[i].deliveredPosition
        else { return [] }
        channels[ci].setThreadDelivered(t, i, to: position, time: time)
        return [threadWatermarkEvent(ci, t, channels[ci].threads[t].participants[i], type: .messageDelivered)]
    }

    /// `notification.mark_unread` of a reply: the thread read watermark back to the thread message before it.
    mutating func threadMarkUnread(_ ci: Int, _ t: Int, _ user: UInt32, from position: Int32, time: Int64)
        -> [ReducerOutput]
    {
        let target = channels[ci].threads[t].message(before: position)
        guard let i = channels[ci].threads[t].participant(user),
            target < channels[ci].threads[t].participants[i].readPosition
        else { return [] }
        channels[ci].setThreadRead(t, i, to: target, time: time)
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
            if channels[ci].unreadReplies(t, after: record.readPosition, user: user) > 0 { result.append(t) }
        }
        return result.sorted { channels[ci].threads[$0].parent < channels[ci].threads[$1].parent }
    }

    /// `unread_threads` of `user`: their threads with unread replies over the channels they are a member of now.
    func unreadThreadCount(_ user: UInt32) -> Int {
        userChannels[Int(user)].reduce(0) { $0 + unreadThreads(Int($1), user).count }
    }

    // MARK: Events

    private func writeOptional(_ writer: inout JSONWriter, _ text: String?) {
        if let text { writer.string(text) } else { writer.null() }
    }

    /// `message.read` or `message.delivered` of a thread to the channel:
    /// `cid`, `user_id`, `parent_id`, the watermark's message id and time.
    private func threadWatermarkEvent(_ ci: Int, _ t: Int, _ record: ThreadMember, type: EventType) -> ReducerOutput {
        let read = type == .messageRead
        var writer = JSONWriter(capacity: 192)
        writer.beginObject()
        writer.key(plain: "cid"); writer.string(channels[ci].cid)
        writer.key(plain: "user_id"); writer.string(users[Int(record.user)])
        writer.key(plain: "parent_id"); writer.string(channels[ci].messageIDs[Int(channels[ci].threads[t].parent)])
        writer.key(read ? "last_read_message_id" : "last_delivered_message_id")
        writeOptional(&writer, channels[ci].threadMessageID(t, at: read ? record.readPosition : record.deliveredPosition))
        writer.key(read ? "last_read" : "last_delivered_at")
        writeOptional(&writer, times.decode(read ? record.readTime : record.deliveredTime))
        writer.endObject()
        return ReducerOutput(stage: "out", type: type.wireName, subject: channels[ci].cid, data: writer.bytes)
    }

    /// `notification.mark_read` or `notification.mark_unread` of a thread to
    /// the user's own devices: `cid`, `user_id`, `parent_id`,
    /// (`first_unread_message_id`,) the read watermark and its time, the
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
        writer.key(plain: "last_read_message_id"); writeOptional(&writer, channels[ci].threadMessageID(t, at: record.readPosition))
        writer.key(plain: "last_read"); writeOptional(&writer, times.decode(record.readTime))
        writer.key(plain: "unread_replies")
        writer.int(channels[ci].unreadReplies(t, after: record.readPosition, user: record.user))
        writer.key(plain: "unread_threads"); writer.int(unreadThreadCount(record.user))
        writer.endObject()
        return ReducerOutput(stage: "out", type: type.wireName, subject: "@" + users[Int(record.user)], data: writer.bytes)
    }
}
