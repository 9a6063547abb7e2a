/// Threads in a channel (docs/events.md rules 14–17): replies, participants
/// and their thread watermarks, apart from the channel's own.
extension ChannelState {
    /// The thread `position` belongs to as a reply, if it is one.
    func thread(ofReply position: Int32) -> Int? {
        // Most channels have no thread: no hashing on their acks.
        threadOfReply.isEmpty ? nil : threadOfReply[position].map { Int($0) }
    }

    /// The thread whose parent is `position`, if it has replies.
    func thread(ofParent position: Int32) -> Int? {
        threadOfParent[position].map { Int($0) }
    }

    /// Countable replies of thread `t` after `position` not sent by `user`: O(replies after it).
    func unreadReplies(_ t: Int, after position: Int32, user: UInt32) -> Int {
        let replies = threads[t].replies
        var n = 0
        for i in Self.upperBound(replies, position)..<replies.count {
            let info = messageInfo[Int(replies[i])]
            if Self.isCountable(info) && info & Self.senderMask != user { n += 1 }
        }
        return n
    }

    /// Adds the reply at `position` to the thread of the message at `root`
    /// (a channel message), creating the thread on its first reply: its
    /// author, the replier and the users it mentions take part (if members
    /// now). A new participant starts with nothing of the thread unread before
    /// their entry: the parent's author at the parent, a mentioned user and a
    /// new replier at the thread message before this reply, at `time`.
    /// Sending is not reading (rule 3): a replier's thread watermarks stay.
    mutating func addReply(_ position: Int32, root: Int32, sender: UInt32, mentioned: [UInt32], time: Int64) {
        let t: Int
        if let existing = thread(ofParent: root) {
            t = existing
        } else {
            t = threads.count
            threads.append(ThreadState(parent: root))
            threadOfParent[root] = Int32(t)
            let author = self.sender(at: root)
            if currentSlot(of: author) != nil { join(t, author, at: root, time: TimeTable.none) }
        }
        let before = threads[t].message(before: position)
        threadOfReply[position] = Int32(t)
        threads[t].replies.append(position)
        for user in mentioned where currentSlot(of: user) != nil && threads[t].participant(user) == nil {
            join(t, user, at: before, time: time)
        }
        if currentSlot(of: sender) != nil && threads[t].participant(sender) == nil {
            join(t, sender, at: before, time: time)
        }
    }

    /// `user` takes part in thread `t` from `position` (the parent: nothing read), at `time`.
    private mutating func join(_ t: Int, _ user: UInt32, at position: Int32, time: Int64) {
        let parent = threads[t].parent
        let passed = position == parent ? Crossings() : Crossings(position: position, time: time)
        let stamp = takeReadStamp()
        threads[t].participants.append(ThreadMember(
            user: user, readPosition: position, deliveredPosition: position, readTime: time, deliveredTime: time,
            readStamp: stamp, joinedAt: position, history: WatermarkHistory(read: passed, delivered: passed),
            ownRead: position, ownReadTime: time, ownDelivered: position))
        participation[user, default: []].append(Int32(t))
    }

    /// Moves participant `i`'s public thread read watermark forward with the next read stamp.
    mutating func setThreadRead(_ t: Int, _ i: Int, to position: Int32, time: Int64) {
        guard position > threads[t].participants[i].readPosition else { return }
        threads[t].participants[i].history.read.append(position, time)
        threads[t].participants[i].readPosition = position
        threads[t].participants[i].readTime = time
        let stamp = takeReadStamp()
        threads[t].participants[i].readStamp = stamp
    }

    /// Moves participant `i`'s thread delivered watermark forward.
    mutating func setThreadDelivered(_ t: Int, _ i: Int, to position: Int32, time: Int64) {
        guard position > threads[t].participants[i].deliveredPosition else { return }
        threads[t].participants[i].history.delivered.append(position, time)
        threads[t].participants[i].deliveredPosition = position
        threads[t].participants[i].deliveredTime = time
    }

    /// The message id a thread watermark names: `nil` at the parent (no reply).
    func threadMessageID(_ t: Int, at position: Int32) -> String? {
        position == threads[t].parent ? nil : messageIDs[Int(position)]
    }
}
