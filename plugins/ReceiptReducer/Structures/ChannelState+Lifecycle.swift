/// A channel's life beyond messages and acks (docs/events.md "A channel's
/// life"): truncation, members who hide it, members erased for good.
extension ChannelState {
    /// Whether the message at `position` is gone with a truncation.
    func isGone(_ position: Int32) -> Bool {
        messageIDs[Int(position)].isEmpty
    }

    /// The positions a truncation through `position` takes: every message up
    /// to it, and every reply of a thread whose parent it takes (a thread goes
    /// with its parent), sorted.
    func truncation(through position: Int32) -> [Int32] {
        guard position >= 0 else { return [] }
        var taken = Set((0...position).filter { !isGone($0) })
        for thread in threads where thread.parent <= position {
            for reply in thread.replies where !isGone(reply) { taken.insert(reply) }
        }
        return taken.sorted()
    }

    /// Takes the messages at `positions` (``truncation(through:)``): they stop
    /// counting, their mentions go, their ids are forgotten (an ack naming one
    /// is `unknown_message`, a watermark at one names no message) and the id
    /// index is built anew. O(n).
    mutating func truncate(_ positions: [Int32]) {
        guard !positions.isEmpty else { return }
        for p in positions {
            _ = deleteMessage(at: p)
            mentionedUsers[p] = nil
            messageIDs[Int(p)] = ""
        }
        messageIndex = PositionIndex(ids: messageIDs)
    }

    /// The badge counts of the record in `slot`: unread messages and mentions
    /// after their own read watermark (the forgotten ones included); none
    /// while they hide the channel.
    func badge(_ slot: Int32) -> (messages: Int, mentions: Int) {
        let record = members[Int(slot)]
        guard !record.hidden else { return (0, 0) }
        return (unreadMessages(slot, own: true), unreadMentions(slot))
    }

    /// Hides the channel for the current member in `slot` (`true`) or shows it
    /// (`false`); `false` when that changes nothing.
    mutating func setHidden(_ hidden: Bool, slot: Int32) -> Bool {
        guard members[Int(slot)].hidden != hidden else { return false }
        members[Int(slot)].hidden = hidden
        Self.update(&hiddenSlots, slot, hidden ? 1 : -1)
        return true
    }

    /// Shows the channel again to everyone who hid it (a new channel message):
    /// the slots shown, in slot order.
    mutating func showToAll() -> [Int32] {
        let shown = hiddenSlots
        for slot in shown { members[Int(slot)].hidden = false }
        hiddenSlots = []
        return shown
    }
}

extension ChannelState {
    /// Erases the removed member's record in `slot` (`user.deleted` with
    /// `hard_delete`): their crossings and own watermarks go, and the record
    /// counts in nothing; added again, they start as a new member.
    mutating func erase(slot: Int32) {
        precondition(!members[Int(slot)].isMember, "only a removed member's record is erased")
        let record = members[Int(slot)]
        histories.remove(for: &members[Int(slot)], slot: slot)
        members[Int(slot)] = MemberState(
            user: record.user, readPosition: -1, deliveredPosition: -1, isMember: false, readTime: TimeTable.none,
            deliveredTime: TimeTable.none, joinedAt: -1, erased: true, readStamp: record.readStamp)
        own[slot] = nil
        floors[slot] = nil
    }
}

extension ChannelState {
    /// The current members the message at `position` is unread for, by slot:
    /// it counts (regular, not silent, not deleted, in the channel), they did
    /// not send it, were members when it came, have not read it (their own read
    /// watermark) and do not hide the channel. O(members).
    func unreadFor(_ position: Int32) -> [(user: UInt32, slot: Int32)] {
        let info = messageInfo[Int(position)]
        guard Self.isCountable(info), inChannel(position) else { return [] }
        let sender = info & Self.senderMask
        var found: [(user: UInt32, slot: Int32)] = []
        for i in members.indices {
            let record = members[i]
            guard record.isMember, !record.hidden, record.user != sender, record.joinedAt < position,
                ownReadPosition(Int32(i)) < position
            else { continue }
            found.append((record.user, Int32(i)))
        }
        return found
    }
}
