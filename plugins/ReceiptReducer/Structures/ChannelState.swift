/// Everything the reducer keeps for one channel, with the count structures.
///
/// - Messages: ids by position, sender and flags packed in a `UInt32`, an id
///   index, a Fenwick tree of "countable" flags (regular, not silent, not
///   deleted) and, per sender, the sorted positions of their countable messages.
/// - Members: records by slot, a user → slot map, Fenwick trees counting current
///   members by read and by delivered position (element `p + 1` for position
///   `p`, element 0 for "none"), the readers' order by recency (``ReaderList``,
///   for `message_receipts` pages) and the members' order by user id
///   (``MemberOrder``, for `channel_state` pages and `message_receipts` lists),
///   and when each watermark passed each message (``WatermarkHistory``, for the
///   records that need one).
struct ChannelState: Sendable {
    /// Flag bits in ``messageInfo``; the low 29 bits are the sender.
    static let systemBit: UInt32 = 1 << 29
    static let silentBit: UInt32 = 1 << 30
    static let deletedBit: UInt32 = 1 << 31
    static let senderMask: UInt32 = (1 << 29) - 1

    /// The channel id.
    let cid: String
    /// Its channel type, the `TYPE` of `TYPE:ID` (the privacy toggles' key).
    let typeName: String
    /// Message ids by position.
    var messageIDs: [String] = []
    /// Sender and flags by position.
    var messageInfo: [UInt32] = []
    /// Message id → position.
    var messageIndex = PositionIndex()
    /// 1 at each countable message.
    var countable = Fenwick()
    /// Sender → sorted positions of their countable messages.
    var ownCountable: [UInt32: [Int32]] = [:]
    /// Position → the users its message mentions (each once, never the
    /// sender), for the messages that mention anyone.
    var mentionedUsers: [Int32: [UInt32]] = [:]
    /// User → sorted positions of the countable messages that mention them.
    var mentions: [UInt32: [Int32]] = [:]
    /// Member records by slot (current and removed).
    var members: [MemberState] = []
    /// User → slot in ``members`` (``slot(of:)``).
    var slots = SlotIndex()
    /// Current members.
    var memberCount = 0
    /// Current members by read position (element `p + 1`).
    var reads = Fenwick([0])
    /// Current members by delivered position (element `p + 1`).
    var delivered = Fenwick([0])
    /// ``MemberState/joinedAt`` of the current members who joined after a
    /// message, sorted: they count in nothing for the messages up to it. Four
    /// bytes per such member, none per message.
    var lateJoins: [Int32] = []
    /// Current members' slots by read recency (the newest last).
    var readers = ReaderList()
    /// The read stamp the next read watermark move takes (``MemberState/readStamp``).
    var nextReadStamp: Int64 = 0
    /// Current members, by user id.
    var memberOrder = MemberOrder()
    /// Read positions of the current members whose read receipts are off, sorted.
    var hiddenReads: [Int32] = []
    /// Delivered positions of the current members whose delivery receipts are off, sorted.
    var hiddenDeliveries: [Int32] = []
    /// Current members with read or delivery receipts off.
    var hiddenMembers = 0
    /// ``MemberState/joinedAt`` of the current members with read receipts
    /// off, with delivery receipts off, and with either, each sorted.
    var hiddenReadJoins: [Int32] = []
    var hiddenDeliveryJoins: [Int32] = []
    var hiddenJoins: [Int32] = []
    /// When each watermark passed each message, for the records whose
    /// crossings are not just their watermarks' last moves (a second move
    /// forward): a record without one has ``WatermarkHistory/init(implied:)``.
    /// Members who moved once pay nothing.
    var histories = HistoryStore()
    /// Slot → the member's own watermarks, for the records whose own
    /// watermarks differ from their public ones (``OwnWatermarks``): after a
    /// mark unread, or an ack made while a receipt was hidden.
    var own: [Int32: OwnWatermarks] = [:]
    /// Slots of the current members who hid the channel (``MemberState/hidden``), sorted.
    var hiddenSlots: [Int32] = []
    /// Users banned from acknowledging in this channel (`user.banned` with its cid).
    var banned: Set<UInt32> = []
    /// Slot → what forgotten messages still add to the record's counts
    /// (``forget(oldest:)``), for the records that have anything there.
    var floors: [Int32: Floor] = [:]
    /// Messages the channel forgot (retention) since it was created.
    var forgotten = 0
    /// Whether a message it forgot was not taken by a truncation (a truncation
    /// since takes it: it counts in no floor then).
    var forgottenLive = false

    init(cid: String) {
        self.cid = cid
        typeName = String(cid.prefix { $0 != ":" })
    }

    /// The last channel message's position (a thread reply not shown in the
    /// channel is not one), -1 when there is none.
    var latest: Int32 = -1
    /// The channel's threads, in the order of their first replies.
    var threads: [ThreadState] = []
    /// Parent position → index in ``threads``.
    var threadOfParent: [Int32: Int32] = [:]
    /// Reply position → index in ``threads``.
    var threadOfReply: [Int32: Int32] = [:]
    /// The replies not shown in the channel: they never count in it.
    var threadOnly: Set<Int32> = []
    /// User → the threads they take part in (indices in ``threads``).
    var participation: [UInt32: [Int32]] = [:]

    /// Whether the message at `position` counts as unread for others.
    static func isCountable(_ info: UInt32) -> Bool {
        info & (systemBit | silentBit | deletedBit) == 0
    }

    /// The message id at `position`, `nil` for -1 and for a message the
    /// channel's truncation took (its id is empty: ``truncate(through:)``).
    func messageID(at position: Int32) -> String? {
        guard position >= 0, !messageIDs[Int(position)].isEmpty else { return nil }
        return messageIDs[Int(position)]
    }

    /// The sender of the message at `position`.
    func sender(at position: Int32) -> UInt32 {
        messageInfo[Int(position)] & Self.senderMask
    }

    /// Countable messages after `position` not sent by `user`: O(log n).
    func unread(after position: Int32, user: UInt32) -> Int {
        let all = countable.total - countable.prefix(Int(position) + 1)
        guard let own = ownCountable[user], !own.isEmpty else { return all }
        return all - (own.count - Self.upperBound(own, position))
    }

    /// Countable messages after `position` that mention `user` (never their own): O(log n).
    func unreadMentions(after position: Int32, user: UInt32) -> Int {
        guard let list = mentions[user], !list.isEmpty else { return 0 }
        return list.count - Self.upperBound(list, position)
    }

    /// The first countable message after `position` not sent by `user`, if any:
    /// O(log² n) (a run of the user's own messages is skipped by binary search).
    func firstUnread(after position: Int32, user: UInt32) -> Int32? {
        let before = countable.prefix(Int(position) + 1)
        guard countable.total > before else { return nil }
        let rank = before + 1  // rank (1-based) of the first countable after `position`
        let first = Int32(countable.select(rank))
        guard let own = ownCountable[user] else { return first }
        let i = Self.lowerBound(own, first)
        guard i < own.count, own[i] == first else { return first }
        // own[i...] hold ranks r(own[j]) >= rank + (j - i); the run of own messages
        // at consecutive ranks ends at the first j where r(own[j]) - j > rank - i.
        var low = i
        var high = own.count
        while low < high {
            let mid = (low + high) / 2
            if countable.prefix(Int(own[mid]) + 1) - mid > rank - i { high = mid } else { low = mid + 1 }
        }
        let target = rank + (low - i)
        guard target <= countable.total else { return nil }
        return Int32(countable.select(target))
    }

    /// The first index in `sorted` whose element is greater than `value`.
    static func upperBound(_ sorted: [Int32], _ value: Int32) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid] <= value { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The first index in `sorted` whose element is not less than `value`.
    static func lowerBound<Element: Comparable>(_ sorted: [Element], _ value: Element) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }

    // MARK: Changes

    /// Whether the message at `position` is in the channel (not a thread reply the channel does not show).
    func inChannel(_ position: Int32) -> Bool {
        threadOnly.isEmpty || !threadOnly.contains(position)
    }

    /// The last channel message before `position`, -1 if none: thread replies
    /// the channel does not show are passed over, O(those replies).
    func channelMessage(before position: Int32) -> Int32 {
        var p = position - 1
        while p >= 0 && !inChannel(p) { p -= 1 }
        return p
    }

    /// Appends a message and returns its position. `mentioned` lists each
    /// mentioned user once, never the sender. A message not `inChannel` (a
    /// thread reply the channel does not show) never counts in the channel.
    mutating func appendMessage(
        id: String, sender: UInt32, system: Bool, silent: Bool, mentioned: [UInt32] = [], inChannel: Bool = true
    ) -> Int32 {
        let position = Int32(messageIDs.count)
        var info = sender
        if system { info |= Self.systemBit }
        if silent { info |= Self.silentBit }
        messageIDs.append(id)
        messageInfo.append(info)
        messageIndex.insert(position, in: messageIDs)
        if inChannel { latest = position } else { threadOnly.insert(position) }
        let counts = Self.isCountable(info) && inChannel
        countable.append(counts ? 1 : 0)
        if counts { ownCountable[sender, default: []].append(position) }
        if !mentioned.isEmpty {
            mentionedUsers[position] = mentioned
            if counts {
                for user in mentioned { mentions[user, default: []].append(position) }
            }
        }
        reads.append(0)
        delivered.append(0)
        return position
    }

    /// Marks the message at `position` deleted; `false` if it already was.
    mutating func deleteMessage(at position: Int32) -> Bool {
        let info = messageInfo[Int(position)]
        guard info & Self.deletedBit == 0 else { return false }
        messageInfo[Int(position)] = info | Self.deletedBit
        if Self.isCountable(info) && inChannel(position) {
            countable.add(Int(position), -1)
            let sender = info & Self.senderMask
            let i = Self.lowerBound(ownCountable[sender] ?? [], position)
            ownCountable[sender]?.remove(at: i)
            for user in mentionedUsers[position] ?? [] {
                let j = Self.lowerBound(mentions[user] ?? [], position)
                mentions[user]?.remove(at: j)
            }
        }
        return true
    }

    /// Counts the member in `slot` in the structures (`delta` +1) or stops counting them (-1).
    private mutating func count(slot: Int32, _ delta: Int32, _ users: [String], _ flags: PrivacyFlags) {
        let record = members[Int(slot)]
        reads.add(Int(record.readPosition) + 1, delta)
        delivered.add(Int(record.deliveredPosition) + 1, delta)
        if record.joinedAt >= 0 { Self.update(&lateJoins, record.joinedAt, delta) }
        if delta > 0 {
            readers.insert(slot, members)
            memberOrder.insert(record.user, users)
        } else {
            readers.remove(slot, members)
            memberOrder.remove(record.user, users)
        }
        countHidden(record, delta, flags)
    }

    /// Counts a current member in the hidden members' structures (`delta` +1) or stops (-1): O(h).
    mutating func countHidden(_ record: MemberState, _ delta: Int32, _ flags: PrivacyFlags) {
        if flags.contains(.readOff) {
            Self.update(&hiddenReads, record.readPosition, delta)
            Self.update(&hiddenReadJoins, record.joinedAt, delta)
        }
        if flags.contains(.deliveryOff) {
            Self.update(&hiddenDeliveries, record.deliveredPosition, delta)
            Self.update(&hiddenDeliveryJoins, record.joinedAt, delta)
        }
        if !flags.isEmpty {
            hiddenMembers += Int(delta)
            Self.update(&hiddenJoins, record.joinedAt, delta)
        }
    }

    /// Inserts (`delta` +1) or removes (-1) one `value` in a sorted array.
    static func update(_ sorted: inout [Int32], _ value: Int32, _ delta: Int32) {
        let i = lowerBound(sorted, value)
        if delta > 0 { sorted.insert(value, at: i) } else { sorted.remove(at: i) }
    }

    /// Changes the privacy flags a current member is counted with.
    mutating func changeFlags(slot: Int32, from old: PrivacyFlags, to new: PrivacyFlags) {
        let record = members[Int(slot)]
        guard record.isMember, old != new else { return }
        countHidden(record, -1, old)
        countHidden(record, 1, new)
    }

    /// Makes `user` a member: a returning member keeps their watermarks (and
    /// their place by read recency), a new one starts at the latest message at
    /// `time`, with the next read stamp. Returns `false` if already a member.
    mutating func addMember(_ user: UInt32, time: Int64, _ users: [String], flags: PrivacyFlags) -> Bool {
        let known = slot(of: user)
        if let slot = known, !members[Int(slot)].erased {
            guard !members[Int(slot)].isMember else { return false }
            members[Int(slot)].isMember = true
            memberCount += 1
            count(slot: slot, 1, users, flags)
            return true
        }
        let start = latest
        let startTime = start >= 0 ? time : TimeTable.none
        let record = MemberState(
            user: user, readPosition: start, deliveredPosition: start, isMember: true, readTime: startTime,
            deliveredTime: startTime, joinedAt: start, readStamp: takeReadStamp())
        // An erased record's slot is taken again, as a new member's.
        let slot = known ?? Int32(members.count)
        if Int(slot) < members.count {
            histories.remove(for: &members[Int(slot)], slot: slot)
            members[Int(slot)] = record
            own[slot] = nil
            floors[slot] = nil
        } else {
            slots.insert(slot, user: user, members: members)
            members.append(record)
        }
        memberCount += 1
        count(slot: slot, 1, users, flags)
        return true
    }

    /// Stops counting `user`, keeping their record. Returns `false` if not a member.
    mutating func removeMember(_ user: UInt32, _ users: [String], flags: PrivacyFlags) -> Bool {
        guard let slot = slot(of: user), members[Int(slot)].isMember else { return false }
        count(slot: slot, -1, users, flags)
        members[Int(slot)].isMember = false
        _ = setHidden(false, slot: slot)
        memberCount -= 1
        return true
    }

    /// The slot of `user`'s record, current or not.
    func slot(of user: UInt32) -> Int32? {
        slots.slot(of: user, in: members)
    }

    /// The crossings of the record in `slot`.
    func history(_ slot: Int32) -> WatermarkHistory {
        histories.history(of: members[Int(slot)], slot: slot)
    }

    /// Keeps `history` for `slot` (its record's watermarks already moved), or
    /// nothing if the record implies it.
    mutating func store(_ history: WatermarkHistory, slot: Int32) {
        histories.store(history, for: &members[Int(slot)], slot: slot)
    }

    /// The slots whose records keep a history, with it, by slot (for snapshots).
    var storedHistories: [(slot: Int32, history: WatermarkHistory)] {
        members.indices.compactMap { slot in
            members[slot].history == .none ? nil : (Int32(slot), history(Int32(slot)))
        }
    }

    /// The read stamp for the next read watermark move
    /// (``MemberState/readStamp``). Records keep 32 bits: before the stamps
    /// run out, every stamp in the channel is renumbered 0, 1, 2, … in its
    /// order (``renumberReadStamps()``).
    mutating func takeReadStamp() -> Int64 {
        if nextReadStamp > Int64(UInt32.max) { renumberReadStamps() }
        defer { nextReadStamp += 1 }
        return nextReadStamp
    }

    /// Gives the channel's read stamps (its records' and its thread
    /// participants') the numbers 0, 1, 2, … in their order: every order by
    /// stamp stays, and ``nextReadStamp`` follows the last. O(n log n), once
    /// in four billion moves. A `message_receipts` cursor given out before
    /// names a stamp that no longer means the same reader.
    mutating func renumberReadStamps() {
        var stamps = members.map(\.readStamp)
        for thread in threads { stamps += thread.participants.map(\.readStamp) }
        stamps.sort()
        func renumbered(_ stamp: Int64) -> Int64 { Int64(Self.lowerBound(stamps, stamp)) }
        for slot in members.indices { members[slot].readStamp = renumbered(members[slot].readStamp) }
        for t in threads.indices {
            for i in threads[t].participants.indices {
                threads[t].participants[i].readStamp = renumbered(threads[t].participants[i].readStamp)
            }
        }
        nextReadStamp = Int64(stamps.count)
    }

    /// The time the read (`read`) or delivered watermark of the record in
    /// `slot` passed the message at `position`, `nil` if it has not.
    func passed(_ position: Int32, slot: Int32, read: Bool) -> Int64? {
        let record = members[Int(slot)]
        guard record.history != .none else {
            if read { return record.readPosition >= position ? record.readTime : nil }
            return record.deliveredPosition >= position ? record.deliveredTime : nil
        }
        let history = histories.history(of: record, slot: slot)
        return (read ? history.read : history.delivered).time(passing: position)
    }

    /// Moves a member's public read watermark forward (it never moves back:
    /// a mark unread is the own watermark's) with the next read stamp, and
    /// moves them to their new place by read recency.
    mutating func setRead(slot: Int32, to position: Int32, time: Int64, flags: PrivacyFlags) {
        let old = members[Int(slot)]
        var history = history(slot)
        history.read.append(position, time)
        if old.isMember {
            if old.readPosition != position {
                if flags.contains(.readOff) {
                    Self.update(&hiddenReads, old.readPosition, -1)
                    Self.update(&hiddenReads, position, 1)
                }
                reads.add(Int(old.readPosition) + 1, -1)
                reads.add(Int(position) + 1, 1)
            }
            readers.remove(slot, members)  // at the old key, before the record changes
        }
        // The forgotten messages' share of the counts stays only while the watermark does.
        clearPublicFloor(slot)
        if own.isEmpty || own[slot] == nil { clearOwnFloor(slot) }
        members[Int(slot)].readPosition = position
        members[Int(slot)].readTime = time
        let stamp = takeReadStamp()
        members[Int(slot)].readStamp = stamp
        if old.isMember { readers.insert(slot, members) }
        store(history, slot: slot)
    }

    /// Sets a current member's delivered watermark.
    mutating func setDelivered(slot: Int32, to position: Int32, time: Int64, flags: PrivacyFlags) {
        let old = members[Int(slot)]
        var history = history(slot)
        if position > old.deliveredPosition { history.delivered.append(position, time) }
        if old.isMember && old.deliveredPosition != position {
            if flags.contains(.deliveryOff) {
                Self.update(&hiddenDeliveries, old.deliveredPosition, -1)
                Self.update(&hiddenDeliveries, position, 1)
            }
            delivered.add(Int(old.deliveredPosition) + 1, -1)
            delivered.add(Int(position) + 1, 1)
        }
        members[Int(slot)].deliveredPosition = position
        members[Int(slot)].deliveredTime = time
        store(history, slot: slot)
    }

    /// The own watermarks of the record in `slot` (its public ones unless they differ).
    func ownWatermarks(_ slot: Int32) -> OwnWatermarks {
        // Most channels have no entry: no hashing on their acks.
        own.isEmpty ? OwnWatermarks(public: members[Int(slot)])
            : own[slot] ?? OwnWatermarks(public: members[Int(slot)])
    }

    /// The own read watermark's position of the record in `slot`.
    func ownReadPosition(_ slot: Int32) -> Int32 {
        own.isEmpty ? members[Int(slot)].readPosition : own[slot]?.readPosition ?? members[Int(slot)].readPosition
    }

    /// Keeps `watermarks` as the own watermarks of `slot`, or no entry if they
    /// are the public ones.
    mutating func setOwn(_ watermarks: OwnWatermarks, slot: Int32) {
        // Most channels forgot nothing: no lookups on their acks.
        if !floors.isEmpty {
            let before = ownWatermarks(slot)
            if before.readPosition != watermarks.readPosition || before.readTime != watermarks.readTime { clearOwnFloor(slot) }
        }
        if watermarks.agree(with: members[Int(slot)]) {
            if !own.isEmpty { own[slot] = nil }
        } else {
            own[slot] = watermarks
        }
    }

    /// How many current members joined at or after the message at `position`
    /// (``MemberState/joinedAt``): they count for it in nothing. O(log n).
    func joined(from position: Int32) -> Int {
        lateJoins.count - Self.lowerBound(lateJoins, position)
    }

    /// The channel message at `position`'s counts over everyone it counts
    /// for: the current members but its sender and those who joined at or
    /// after it (rule 8) — how many, and how many of them its read and its
    /// delivered watermarks passed. O(log n).
    func counts(at position: Int32) -> (others: Int, read: Int, delivered: Int) {
        // Members who joined at or after the message count for it in nothing: all of them
        // are past it, so they come off the members and the counts alike.
        let lateJoiners = joined(from: position)
        var others = memberCount - lateJoiners
        var read = others - reads.prefix(Int(position) + 1)
        var delivered = others - self.delivered.prefix(Int(position) + 1)
        if let slot = currentSlot(of: sender(at: position)), counts(slot: slot, for: position) {
            let record = members[Int(slot)]
            others -= 1
            if record.readPosition >= position { read -= 1 }
            if record.deliveredPosition >= position { delivered -= 1 }
        }
        return (others, read, delivered)
    }

    /// Whether the record in `slot` counts for the message at `position`:
    /// they were a member when it came.
    func counts(slot: Int32, for position: Int32) -> Bool {
        members[Int(slot)].joinedAt < position
    }

    /// The slot of `user` if they are a member now.
    func currentSlot(of user: UInt32) -> Int32? {
        guard let slot = slot(of: user), members[Int(slot)].isMember else { return nil }
        return slot
    }
}
