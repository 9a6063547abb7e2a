import EventBusCore

/// `message_receipts` of a thread reply and `thread_state` (docs/events.md
/// rules 14–17): counted over the thread's participants who are members now,
/// computed by a scan of the participants, O(p log p) for p participants.
extension ReceiptReducer {
    /// `message_receipts` of the reply at `request.position` in thread `t`:
    /// the same reply as for a channel message, over the thread's
    /// participants (members now, other than the reply's sender) and their
    /// thread watermarks. Readers come newest first by (last read, stamp),
    /// lists by user id, with the same cursors as a channel's.
    func threadReceipts(_ request: ReceiptsRequest, _ t: Int, _ visibility: Visibility) -> (bytes: [UInt8], hidden: Int) {
        let position = request.position
        let tally = threadTally(channels[request.ci], t, position, visibility)
        let (shownRead, shownDelivery, hidden) = (tally.shownRead, tally.shownDelivery, tally.hidden)
        let (readers, delivered) = (tally.readers, tally.delivered)

        var writer = JSONWriter(capacity: 160 + request.pageSize * 64)
        writer.beginObject()
        writer.key("read_count"); writer.int(readers.count)
        writer.key("delivered_count"); writer.int(delivered.count)
        writer.key("unread_member_count"); writer.int(shownRead.count - readers.count)
        writer.key("undelivered_member_count"); writer.int(shownDelivery.count - delivered.count)
        writer.key("hidden_member_count"); writer.int(hidden)
        var nextCursor: String?
        if let list = request.list {
            let chosen: [ThreadMember] =
                switch list {
                case .read: readers
                case .delivered: delivered
                case .unread: shownRead.filter { $0.readPosition < position }
                case .undelivered: shownDelivery.filter { $0.deliveredPosition < position }
                }
            let remaining = chosen.sorted { users[Int($0.user)] < users[Int($1.user)] }
                .filter { record in request.after.map { users[Int(record.user)] > $0.userID } ?? true }
            let page = remaining.prefix(request.pageSize)
            writer.key("members")
            writer.beginArray()
            for record in page {
                writer.beginObject()
                writer.key("user_id"); writer.string(users[Int(record.user)])
                if let key = list.timeKey {
                    let passed = list.isRead ? record.history.read : record.history.delivered
                    writer.key(key); times.write(passed.time(passing: position) ?? TimeTable.none, to: &writer)
                }
                writer.endObject()
            }
            writer.endArray()
            if remaining.count > page.count, let last = page.last { nextCursor = MemberCursor(userID: users[Int(last.user)]).text }
        } else {
            func older(_ a: ThreadMember, _ b: ThreadMember) -> Bool {
                ReaderList.older((a.readTime, a.readStamp), (b.readTime, b.readStamp))
            }
            let remaining = readers.sorted { older($1, $0) }
                .filter { record in request.cursor.map { ReaderList.older((record.readTime, record.readStamp), $0.key) } ?? true }
            let page = remaining.prefix(request.pageSize)
            writer.key("readers")
            writer.beginArray()
            for record in page {
                writer.beginObject()
                writer.key("user_id"); writer.string(users[Int(record.user)])
                writer.key("last_read"); times.write(record.readTime, to: &writer)
                writer.key("read_at")
                times.write(record.history.read.time(passing: position) ?? TimeTable.none, to: &writer)
                writer.endObject()
            }
            writer.endArray()
            if remaining.count > page.count, let last = page.last {
                nextCursor = ReaderCursor(time: last.readTime, stamp: last.readStamp).text
            }
        }
        writer.key("next_cursor"); writer.string(orNull: nextCursor)
        writer.endObject()
        return (writer.bytes, hidden)
    }

    /// `thread_state {cid, parent_id, viewer}`: the thread's parent, its
    /// `reply_count` (replies not deleted), its participants who are members
    /// now, sorted by user id, each with their thread watermarks and
    /// `unread_replies` (the fields the view hides left out), and
    /// `hidden_member_count`.
    func threadState(_ ci: Int, _ t: Int, _ visibility: Visibility) -> (bytes: [UInt8], hidden: Int) {
        let channel = channels[ci]
        let thread = channel.threads[t]
        let participants = thread.participants.filter { channel.currentSlot(of: $0.user) != nil }
            .sorted { users[Int($0.user)] < users[Int($1.user)] }
        let hidden = participants.count {
            visibility.hidesRead($0.user, userFlags) || visibility.hidesDelivery($0.user, userFlags)
        }
        var writer = JSONWriter(capacity: 160 + participants.count * 192)
        writer.beginObject()
        writer.key("cid"); writer.string(channel.cid)
        writer.key("parent_id"); writer.string(channel.messageIDs[Int(thread.parent)])
        writer.key("reply_count")
        writer.int(thread.replies.count { channel.messageInfo[Int($0)] & ChannelState.deletedBit == 0 })
        writer.key("participants")
        writer.beginArray()
        for record in participants {
            writer.beginObject()
            writer.key("user_id"); writer.string(users[Int(record.user)])
            if !visibility.hidesRead(record.user, userFlags) {
                // The viewer sees their own thread read watermark (rule 18), everyone else the public ones.
                let own = record.user == visibility.viewer
                let (read, time) = own ? (record.ownRead, record.ownReadTime) : (record.readPosition, record.readTime)
                writer.key("last_read"); times.write(time, to: &writer)
                writer.key("last_read_message_id"); writer.string(orNull: channel.threadMessageID(t, at: read))
                writer.key("unread_replies"); writer.int(channel.unreadReplies(t, after: read, user: record.user))
            }
            if !visibility.hidesDelivery(record.user, userFlags) {
                writer.key("last_delivered_at"); times.write(record.deliveredTime, to: &writer)
                writer.key("last_delivered_message_id")
                writer.string(orNull: channel.threadMessageID(t, at: record.deliveredPosition))
            }
            writer.endObject()
        }
        writer.endArray()
        writer.key("hidden_member_count"); writer.int(hidden)
        writer.endObject()
        return (writer.bytes, hidden)
    }
}
