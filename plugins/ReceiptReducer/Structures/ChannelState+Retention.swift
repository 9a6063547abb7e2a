/// Message retention (docs/events.md rule 25): a channel keeps its newest
/// messages only, so that the reducer's memory stays bounded however long it
/// runs, while every count stays exact.
///
/// ``forget(oldest:)`` drops the oldest positions and renumbers the rest from
/// 0. Whatever pointed into the dropped part points to -1, "before every
/// message kept": a watermark there names no message (null), a member who
/// joined there counts for every message kept. What a dropped message still
/// adds to a count — it is unread for a member whose watermark is before it —
/// moves into that member's ``Floor``, which stays until the watermark moves.
/// A thread goes with its parent; its replies shown in the channel stay, as
/// channel messages, and the others are forgotten with it.
extension ChannelState {
    /// What the messages a channel forgot still add to one record's counts:
    /// unread after its own read watermark (messages and mentions) and after
    /// its public one (messages, as others see them in `channel_state`).
    struct Floor: Sendable, Equatable {
        var ownMessages: Int32 = 0
        var ownMentions: Int32 = 0
        var publicMessages: Int32 = 0

        var isEmpty: Bool { ownMessages == 0 && ownMentions == 0 && publicMessages == 0 }
    }

    /// The messages a channel of `limit` retention may hold before it forgets
    /// down to `limit`: an eighth more (at least one), so that forgetting,
    /// O(messages kept + members), happens once per `limit / 8` messages.
    static func retentionHigh(_ limit: Int) -> Int { limit + max(1, limit / 8) }

    /// Unread messages after the record's own read watermark (`own`) or its
    /// public one, the forgotten ones included.
    func unreadMessages(_ slot: Int32, own: Bool) -> Int {
        let record = members[Int(slot)]
        let position = own ? ownReadPosition(slot) : record.readPosition
        let floor = floors.isEmpty ? 0 : Int(own ? floors[slot]?.ownMessages ?? 0 : floors[slot]?.publicMessages ?? 0)
        return unread(after: position, user: record.user) + floor
    }

    /// Unread mentions after the record's own read watermark, the forgotten ones included.
    func unreadMentions(_ slot: Int32) -> Int {
        let floor = floors.isEmpty ? 0 : Int(floors[slot]?.ownMentions ?? 0)
        return unreadMentions(after: ownReadPosition(slot), user: members[Int(slot)].user) + floor
    }

    /// Forgets what the floor of `slot` keeps for the own read watermark (it moved).
    mutating func clearOwnFloor(_ slot: Int32) {
        guard !floors.isEmpty, var floor = floors[slot] else { return }
        floor.ownMessages = 0
        floor.ownMentions = 0
        floors[slot] = floor.isEmpty ? nil : floor
    }

    /// Forgets what the floor of `slot` keeps for the public read watermark (it moved).
    mutating func clearPublicFloor(_ slot: Int32) {
        guard !floors.isEmpty, var floor = floors[slot] else { return }
        floor.publicMessages = 0
        floors[slot] = floor.isEmpty ? nil : floor
    }

    /// Rebuilds ``countable`` and ``ownCountable`` from ``messageInfo`` and what
    /// the channel shows (``inChannel(_:)``): O(messages). For ``forget(oldest:)``
    /// and a snapshot's load.
    mutating func rebuildMessageCounts() {
        var flags = [Int32](repeating: 0, count: messageInfo.count)
        ownCountable = [:]
        for (position, info) in messageInfo.enumerated() where Self.isCountable(info) && inChannel(Int32(position)) {
            flags[position] = 1
            ownCountable[info & Self.senderMask, default: []].append(Int32(position))
        }
        countable = Fenwick(flags)
    }

    /// Rebuilds ``reads``, ``delivered`` and ``lateJoins`` from the current
    /// members' records: O(messages + members). For ``forget(oldest:)`` and a
    /// snapshot's load.
    mutating func rebuildMemberCounts() {
        var readCounts = [Int32](repeating: 0, count: messageIDs.count + 1)
        var deliveredCounts = readCounts
        var joins: [Int32] = []
        for record in members where record.isMember {
            readCounts[Int(record.readPosition) + 1] += 1
            deliveredCounts[Int(record.deliveredPosition) + 1] += 1
            if record.joinedAt >= 0 { joins.append(record.joinedAt) }
        }
        reads = Fenwick(readCounts)
        delivered = Fenwick(deliveredCounts)
        lateJoins = joins.sorted()
    }

    /// Forgets the oldest `k` messages (positions `0..<k`) and renumbers the
    /// rest from 0: O(messages kept + members + threads).
    mutating func forget(oldest k: Int32) {
        guard k > 0 else { return }
        precondition(Int(k) <= messageIDs.count, "cannot forget more messages than the channel has")
        func map(_ p: Int32) -> Int32 { p >= k ? p - k : -1 }
        func mapSorted(_ sorted: [Int32]) -> [Int32] { sorted.map(map) }

        // What the forgotten messages add to each record's counts, counted before they go.
        for slot in members.indices.map({ Int32($0) }) where !members[Int(slot)].erased {
            let record = members[Int(slot)]
            let own = ownReadPosition(slot)
            var floor = floors[slot] ?? Floor()
            if own < k {
                floor.ownMessages += Int32(unread(after: own, user: record.user) - unread(after: k - 1, user: record.user))
                floor.ownMentions += Int32(
                    unreadMentions(after: own, user: record.user) - unreadMentions(after: k - 1, user: record.user))
            }
            if record.readPosition < k {
                floor.publicMessages += Int32(
                    unread(after: record.readPosition, user: record.user) - unread(after: k - 1, user: record.user))
            }
            floors[slot] = floor.isEmpty ? nil : floor
        }

        if !forgottenLive { forgottenLive = (0..<k).contains { !isGone($0) } }

        // Threads: those whose parent goes, go; their replies the channel does not
        // show are forgotten with them (as a truncation takes them), the others stay
        // as channel messages. The rest are renumbered.
        var kept: [ThreadState] = []
        var orphans: [Int32] = []
        for thread in threads {
            if thread.parent < k {
                for reply in thread.replies where reply >= k && !inChannel(reply) { orphans.append(reply) }
                continue
            }
            var moved = ThreadState(parent: map(thread.parent))
            moved.replies = thread.replies.map(map)
            moved.participants = thread.participants.map { record in
                var record = record
                record.readPosition = map(record.readPosition)
                record.deliveredPosition = map(record.deliveredPosition)
                record.joinedAt = map(record.joinedAt)
                record.ownRead = map(record.ownRead)
                record.ownDelivered = map(record.ownDelivered)
                record.history.read.forget(oldest: k)
                record.history.delivered.forget(oldest: k)
                return record
            }
            kept.append(moved)
        }
        if !orphans.isEmpty { truncate(orphans) }
        threads = kept
        threadOfParent = [:]
        threadOfReply = [:]
        participation = [:]
        for (t, thread) in threads.enumerated() {
            threadOfParent[thread.parent] = Int32(t)
            for reply in thread.replies { threadOfReply[reply] = Int32(t) }
            for record in thread.participants { participation[record.user, default: []].append(Int32(t)) }
        }

        // Messages.
        messageIDs.removeFirst(Int(k))
        messageInfo.removeFirst(Int(k))
        messageIndex = PositionIndex(ids: messageIDs)
        threadOnly = Set(threadOnly.compactMap { $0 >= k ? $0 - k : nil })
        latest = map(latest)
        rebuildMessageCounts()
        var mentioned: [Int32: [UInt32]] = [:]
        for (position, users) in mentionedUsers where position >= k { mentioned[position - k] = users }
        mentionedUsers = mentioned
        mentions = mentions.compactMapValues { list in
            let moved = list.compactMap { $0 >= k ? $0 - k : nil }
            return moved.isEmpty ? nil : moved
        }

        // Members. Their histories are kept relative to their watermarks: taken out before these move.
        let histories = storedHistories
        for (slot, _) in histories { self.histories.remove(for: &members[Int(slot)], slot: slot) }
        for slot in members.indices {
            members[slot].readPosition = map(members[slot].readPosition)
            members[slot].deliveredPosition = map(members[slot].deliveredPosition)
            members[slot].joinedAt = map(members[slot].joinedAt)
        }
        rebuildMemberCounts()
        hiddenReads = mapSorted(hiddenReads)
        hiddenDeliveries = mapSorted(hiddenDeliveries)
        hiddenReadJoins = mapSorted(hiddenReadJoins)
        hiddenDeliveryJoins = mapSorted(hiddenDeliveryJoins)
        hiddenJoins = mapSorted(hiddenJoins)
        for (slot, var history) in histories {
            history.read.forget(oldest: k)
            history.delivered.forget(oldest: k)
            store(history, slot: slot)
        }
        for (slot, var watermarks) in own {
            watermarks.readPosition = map(watermarks.readPosition)
            watermarks.deliveredPosition = map(watermarks.deliveredPosition)
            own[slot] = watermarks.agree(with: members[Int(slot)]) ? nil : watermarks
        }
        forgotten += Int(k)
    }
}

extension Crossings {
    /// Forgets the entries before position `k` and renumbers the rest from 0
    /// (``ChannelState/forget(oldest:)``): the messages kept are passed when
    /// they were before.
    mutating func forget(oldest k: Int32) {
        let kept = entries.filter { $0.position >= k }
        self = Crossings()
        for entry in kept { append(entry.position - k, entry.time) }
    }
}
