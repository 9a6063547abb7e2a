import EventBusCore

/// The reducer's state as compact, versioned bytes.
///
/// Layout (version 1): `RRS` `0x01`, then varints (LEB128; signed ones
/// zigzag) and length-prefixed UTF-8 strings: users; irregular times;
/// rejection counts; channels, each its cid, its messages (id, sender and
/// flags) and its member records (user, read and delivered positions, whether
/// a member now, read and delivered times). Version 2 appends the privacy
/// settings: a flags byte per user, then the channel types with something
/// off (name, flags byte), sorted by name. Version 3 adds to each member
/// record, after its times, its read stamp (``MemberState/readStamp``: the
/// order of the readers by recency). Versions 1 and 2 still load: without
/// settings (version 1) everything is shared; without stamps the readers'
/// order is rebuilt from what they hold — each channel's records sorted by
/// read time, then by user id descending, take stamps 0, 1, 2, …, so equal
/// times list by user id. A channel's next stamp is one past its largest
/// (the latest stamp given is always still held). Version 4 appends, per
/// channel in order, its mentions: the number of messages that mention
/// anyone, then for each, by position, the position and the mentioned users
/// (a count, then user indices); then, per channel in order, its member
/// settings: the number of records with a setting other than the default,
/// then for each, by slot, the slot and a byte (bit 0 muted, bits 1–2 the
/// count preference: 0 all, 1 mentions, 2 off). Versions 1–3 load with no
/// mentions and default settings. Version 5 adds threads and when the
/// watermarks passed the messages: each message, after its flags, has its
/// parent (0 for none, else the parent's position + 1, a channel message
/// before it) and, for a reply, a byte (1 if shown in the channel); at the
/// end, per channel in order, the number of records with a
/// ``WatermarkHistory`` of their own, then for each, by slot, the slot, then
/// the read and the delivered crossings, each a count and that many
/// (position, time) pairs, oldest first; then, per channel, per thread in
/// order of its first reply, its participants: a count, then each one's
/// user, read and delivered positions, read and delivered times, read stamp
/// and crossings. Versions 1–4 load with no threads and no histories: each
/// watermark passed everything up to it at its last move. Version 6 adds to
/// each member record, after its stamp, ``MemberState/joinedAt`` + 1, and to
/// each thread participant, after its stamp, its ``ThreadMember/joinedAt``
/// and its own read position and time and own delivered position;
/// and appends, per channel in order, the members' own watermarks where they
/// differ from the public ones (``OwnWatermarks``): a count, then for each,
/// by slot, the slot, the own read position and time and the own delivered
/// position. Versions 1–5 load with no own watermarks, every member joined
/// before the first message and every participant at the parent. Version 7
/// (a channel's life, rules 20–23) writes a message a truncation took with an
/// empty id and a deleted channel with an empty cid and nothing in it; adds to
/// the member settings byte bit 3 (hidden) and bit 4 (erased); counts five
/// rejection reasons (`banned`); and appends, per channel in order, the users
/// banned there (a count, then user indices, ascending), then the users banned
/// everywhere (the same). Versions 1–6 load with nothing hidden, erased or
/// banned, and four rejection counts. Version 8 (retention, rule 25)
/// appends, per channel in order, the messages it forgot, a byte (1 if one
/// of them was not taken by a truncation), the positions of
/// the replies it keeps outside the channel though their thread went with
/// its forgotten parent (a count, then positions, ascending: each one's id is
/// empty) and the records' floors (``ChannelState/Floor``: a count, then for
/// each, by slot, the slot and its own unread messages, own unread mentions
/// and public unread messages). Versions 1–7 load with nothing forgotten.
/// Only the primary
/// state is stored; the count structures are rebuilt on load in O(n log n).
extension ReceiptReducer {
    static let snapshotMagic: [UInt8] = [0x52, 0x52, 0x53]  // "RRS"
    static let snapshotVersion: UInt8 = 8

    /// Encodes the whole state.
    public func encodeSnapshot() -> [UInt8] {
        var w = SnapshotWriter()
        w.bytes.append(contentsOf: Self.snapshotMagic)
        w.bytes.append(Self.snapshotVersion)
        w.uint(UInt64(users.count))
        for user in users { w.string(user) }
        w.uint(UInt64(times.irregular.count))
        for text in times.irregular { w.string(text) }
        w.uint(UInt64(rejections.count))
        for count in rejections { w.uint(count) }
        w.uint(UInt64(channels.count))
        for channel in channels {
            w.string(channel.cid)
            w.uint(UInt64(channel.messageIDs.count))
            for (position, (id, info)) in zip(channel.messageIDs, channel.messageInfo).enumerated() {
                w.string(id)
                w.uint(UInt64(info))
                if let t = channel.thread(ofReply: Int32(position)) {
                    w.uint(UInt64(channel.threads[t].parent) + 1)
                    w.bytes.append(channel.inChannel(Int32(position)) ? 1 : 0)
                } else {
                    w.uint(0)
                }
            }
            w.uint(UInt64(channel.members.count))
            for record in channel.members {
                w.uint(UInt64(record.user))
                w.int(Int64(record.readPosition))
                w.int(Int64(record.deliveredPosition))
                w.bytes.append(record.isMember ? 1 : 0)
                w.int(record.readTime)
                w.int(record.deliveredTime)
                w.uint(UInt64(record.readStamp))
                w.uint(UInt64(record.joinedAt + 1))
            }
        }
        w.uint(UInt64(userFlags.count))
        for flags in userFlags { w.bytes.append(flags.rawValue) }
        w.uint(UInt64(typeFlags.count))
        for (name, flags) in typeFlags.sorted(by: { $0.key < $1.key }) {
            w.string(name)
            w.bytes.append(flags.rawValue)
        }
        for channel in channels {
            w.uint(UInt64(channel.mentionedUsers.count))
            for (position, mentioned) in channel.mentionedUsers.sorted(by: { $0.key < $1.key }) {
                w.uint(UInt64(position))
                w.uint(UInt64(mentioned.count))
                for user in mentioned { w.uint(UInt64(user)) }
            }
        }
        for channel in channels {
            let changed = channel.members.indices.filter { Self.settingsByte(channel.members[$0]) != 0 }
            w.uint(UInt64(changed.count))
            for slot in changed {
                w.uint(UInt64(slot))
                w.bytes.append(Self.settingsByte(channel.members[slot]))
            }
        }
        for channel in channels {
            let histories = channel.storedHistories
            w.uint(UInt64(histories.count))
            for (slot, history) in histories {
                w.uint(UInt64(slot))
                Self.encode(history, &w)
            }
        }
        for channel in channels {
            for thread in channel.threads {
                w.uint(UInt64(thread.participants.count))
                for record in thread.participants {
                    w.uint(UInt64(record.user))
                    w.uint(UInt64(record.readPosition))
                    w.uint(UInt64(record.deliveredPosition))
                    w.int(record.readTime)
                    w.int(record.deliveredTime)
                    w.uint(UInt64(record.readStamp))
                    w.uint(UInt64(record.joinedAt))
                    w.uint(UInt64(record.ownRead))
                    w.int(record.ownReadTime)
                    w.uint(UInt64(record.ownDelivered))
                    Self.encode(record.history, &w)
                }
            }
        }
        for channel in channels {
            w.uint(UInt64(channel.own.count))
            for (slot, own) in channel.own.sorted(by: { $0.key < $1.key }) {
                w.uint(UInt64(slot))
                w.int(Int64(own.readPosition))
                w.int(own.readTime)
                w.int(Int64(own.deliveredPosition))
            }
        }
        for banned in channels.map(\.banned) + [bannedEverywhere] {
            w.uint(UInt64(banned.count))
            for user in banned.sorted() { w.uint(UInt64(user)) }
        }
        for channel in channels {
            w.uint(UInt64(channel.forgotten))
            w.bytes.append(channel.forgottenLive ? 1 : 0)
            let orphans = channel.threadOnly.filter { channel.thread(ofReply: $0) == nil }.sorted()
            w.uint(UInt64(orphans.count))
            for position in orphans { w.uint(UInt64(position)) }
            w.uint(UInt64(channel.floors.count))
            for (slot, floor) in channel.floors.sorted(by: { $0.key < $1.key }) {
                w.uint(UInt64(slot))
                w.uint(UInt64(floor.ownMessages))
                w.uint(UInt64(floor.ownMentions))
                w.uint(UInt64(floor.publicMessages))
            }
        }
        return w.bytes
    }

    private static func encode(_ history: WatermarkHistory, _ w: inout SnapshotWriter) {
        for crossings in [history.read, history.delivered] {
            w.uint(UInt64(crossings.count))
            for entry in crossings.entries {
                w.uint(UInt64(entry.position))
                w.int(entry.time)
            }
        }
    }

    /// Restores a reducer from ``encodeSnapshot()``'s bytes.
    ///
    /// - Throws: ``SnapshotError`` if the bytes are not a snapshot of a known
    ///   version or are inconsistent (positions or users out of range,
    ///   duplicate ids, trailing bytes).
    public init(snapshot: [UInt8]) throws(SnapshotError) {
        self.init()
        var r = SnapshotReader(snapshot)
        guard snapshot.count >= 4, Array(snapshot[0..<3]) == Self.snapshotMagic else {
            throw SnapshotError("not a receipt reducer snapshot")
        }
        let version = snapshot[3]
        guard (1...Self.snapshotVersion).contains(version) else {
            throw SnapshotError("unknown snapshot version \(version)")
        }
        r.offset = 4
        for _ in 0..<(try r.count("users")) {
            let user = try r.string("user id")
            guard userIndex[user] == nil else { throw SnapshotError("duplicate user \(user)") }
            _ = intern(user)
        }
        var irregular: [String] = []
        for _ in 0..<(try r.count("times")) { irregular.append(try r.string("time")) }
        times = TimeTable(irregular: irregular)
        let reasons = try r.count("rejections")
        // `banned` came with version 7, last of the reasons.
        let expected = version >= 7 ? rejections.count : rejections.count - 1
        guard reasons == expected else { throw SnapshotError("expected \(expected) rejection counts") }
        for i in 0..<reasons { rejections[i] = try r.uint() }
        for _ in 0..<(try r.count("channels")) {
            let cid = try r.string("cid")
            guard channelIndex[cid] == nil else { throw SnapshotError("duplicate channel \(cid)") }
            // An empty cid is a deleted channel's place (version 7): no index entry.
            guard !cid.isEmpty || version >= 7 else { throw SnapshotError("a channel without a cid") }
            if !cid.isEmpty { channelIndex[cid] = Int32(channels.count) }
            channels.append(try Self.decodeChannel(cid, &r, users, version: version))
            let ci = Int32(channels.count - 1)
            for record in channels[Int(ci)].members where record.isMember {
                userChannels[Int(record.user)].append(ci)
            }
        }
        if version >= 2 { try decodeSettings(&r) }
        if version >= 4 {
            try decodeMentions(&r)
            try decodeMemberSettings(&r, version: version)
        }
        if version >= 5 {
            try decodeHistories(&r)
            try decodeParticipants(&r, version: version)
        }
        if version >= 6 { try decodeOwnWatermarks(&r) }
        if version >= 7 { try decodeBans(&r) }
        if version >= 8 { try decodeRetention(&r) }
        guard r.isAtEnd else { throw SnapshotError("trailing bytes at \(r.offset)") }
    }

    /// Reads the privacy settings (version 2) and rebuilds the hidden members' structures.
    private mutating func decodeSettings(_ r: inout SnapshotReader) throws(SnapshotError) {
        guard try r.count("user flags") == users.count else { throw SnapshotError("expected \(users.count) user flags") }
        for i in users.indices {
            let flags = PrivacyFlags(rawValue: try r.byte())
            guard flags.rawValue & ~3 == 0 else { throw SnapshotError("bad flags for user \(users[i])") }
            userFlags[i] = flags
        }
        for _ in 0..<(try r.count("channel types")) {
            let name = try r.string("channel type")
            let flags = PrivacyFlags(rawValue: try r.byte())
            guard !flags.isEmpty, flags.rawValue & ~3 == 0, typeFlags[name] == nil else {
                throw SnapshotError("bad channel type \(name)")
            }
            typeFlags[name] = flags
        }
        for ci in channels.indices {
            var reads: [Int32] = [], readJoins: [Int32] = []
            var deliveries: [Int32] = [], deliveryJoins: [Int32] = []
            var joins: [Int32] = []
            for record in channels[ci].members where record.isMember {
                let flags = userFlags[Int(record.user)]
                if flags.contains(.readOff) {
                    reads.append(record.readPosition)
                    readJoins.append(record.joinedAt)
                }
                if flags.contains(.deliveryOff) {
                    deliveries.append(record.deliveredPosition)
                    deliveryJoins.append(record.joinedAt)
                }
                if !flags.isEmpty { joins.append(record.joinedAt) }
            }
            channels[ci].hiddenReads = reads.sorted()
            channels[ci].hiddenDeliveries = deliveries.sorted()
            channels[ci].hiddenReadJoins = readJoins.sorted()
            channels[ci].hiddenDeliveryJoins = deliveryJoins.sorted()
            channels[ci].hiddenJoins = joins.sorted()
            channels[ci].hiddenMembers = joins.count
        }
    }

    /// A member record's settings as a byte: bit 0 muted, bits 1–2 the count
    /// preference, bit 3 hidden, bit 4 erased.
    static func settingsByte(_ record: MemberState) -> UInt8 {
        let preference: UInt8 = switch record.countUnread {
        case .all: 0
        case .mentions: 1
        case .off: 2
        }
        return (record.muted ? 1 : 0) | preference << 1 | (record.hidden ? 8 : 0) | (record.erased ? 16 : 0)
    }

    /// Reads the bans (version 7): per channel, then everywhere.
    private mutating func decodeBans(_ r: inout SnapshotReader) throws(SnapshotError) {
        func users(_ what: String) throws(SnapshotError) -> Set<UInt32> {
            var found: Set<UInt32> = []
            var previous: Int64 = -1
            for _ in 0..<(try r.count(what)) {
                let user = try r.uint()
                guard user < UInt64(self.users.count), Int64(user) > previous else { throw SnapshotError("bad \(what)") }
                previous = Int64(user)
                found.insert(UInt32(user))
            }
            return found
        }
        for ci in channels.indices { channels[ci].banned = try users("bans of \(channels[ci].cid)") }
        bannedEverywhere = try users("bans everywhere")
    }

    /// Reads what each channel forgot (version 8): its count, the replies kept outside
    /// the channel without a thread, and the records' floors.
    private mutating func decodeRetention(_ r: inout SnapshotReader) throws(SnapshotError) {
        func count32(_ what: String) throws(SnapshotError) -> Int32 {
            let value = try r.uint()
            guard value <= UInt64(Int32.max) else { throw SnapshotError("bad \(what)") }
            return Int32(value)
        }
        for ci in channels.indices {
            let cid = channels[ci].cid
            channels[ci].forgotten = Int(try r.uint())
            let live = try r.byte()
            guard live <= 1 else { throw SnapshotError("\(cid): bad forgotten flag") }
            channels[ci].forgottenLive = live == 1
            var previous: Int64 = -1
            for _ in 0..<(try r.count("orphan replies of \(cid)")) {
                let position = try r.uint()
                guard position < UInt64(channels[ci].messageIDs.count), Int64(position) > previous,
                      channels[ci].isGone(Int32(position)), channels[ci].thread(ofReply: Int32(position)) == nil
                else { throw SnapshotError("\(cid): bad orphan reply") }
                previous = Int64(position)
                channels[ci].threadOnly.insert(Int32(position))
            }
            if previous >= 0 {
                channels[ci].latest = Int32(channels[ci].messageIDs.indices.last { channels[ci].inChannel(Int32($0)) } ?? -1)
            }
            previous = -1
            for _ in 0..<(try r.count("floors of \(cid)")) {
                let slot = try r.uint()
                guard slot < UInt64(channels[ci].members.count), Int64(slot) > previous else {
                    throw SnapshotError("\(cid): bad floor")
                }
                previous = Int64(slot)
                let floor = ChannelState.Floor(ownMessages: try count32("floor"), ownMentions: try count32("floor"),
                                               publicMessages: try count32("floor"))
                if !floor.isEmpty { channels[ci].floors[Int32(slot)] = floor }
            }
        }
    }

    /// Reads the member settings (version 4).
    private mutating func decodeMemberSettings(_ r: inout SnapshotReader, version: UInt8) throws(SnapshotError) {
        for ci in channels.indices {
            var previous = -1
            for _ in 0..<(try r.count("member settings")) {
                let slot = try r.uint()
                let byte = try r.byte()
                guard slot < UInt64(channels[ci].members.count), Int(slot) > previous, byte != 0,
                    byte & (version >= 7 ? ~31 : ~7) == 0, (byte >> 1) & 3 <= 2
                else { throw SnapshotError("\(channels[ci].cid): bad member settings") }
                previous = Int(slot)
                let record = channels[ci].members[Int(slot)]
                let hidden = byte & 8 != 0
                let erased = byte & 16 != 0
                // Only a member hides a channel; only a removed member's record is erased, and emptied.
                guard !hidden || record.isMember,
                    !erased || (!record.isMember && record.readPosition == -1 && record.deliveredPosition == -1)
                else { throw SnapshotError("\(channels[ci].cid): bad member settings at slot \(slot)") }
                channels[ci].members[Int(slot)].muted = byte & 1 == 1
                channels[ci].members[Int(slot)].countUnread = [CountPreference.all, .mentions, .off][Int((byte >> 1) & 3)]
                channels[ci].members[Int(slot)].hidden = hidden
                channels[ci].members[Int(slot)].erased = erased
                if hidden { channels[ci].hiddenSlots.append(Int32(slot)) }
            }
        }
    }

    /// Reads when the watermarks passed the messages (version 5).
    private mutating func decodeHistories(_ r: inout SnapshotReader) throws(SnapshotError) {
        for ci in channels.indices {
            let cid = channels[ci].cid
            var previous = -1
            for _ in 0..<(try r.count("histories")) {
                let slot = try r.uint()
                guard slot < UInt64(channels[ci].members.count), Int(slot) > previous else {
                    throw SnapshotError("\(cid): bad history slot \(slot)")
                }
                previous = Int(slot)
                let record = channels[ci].members[Int(slot)]
                let read = try Self.decodeCrossings(&r, cid, watermark: record.readPosition)
                let delivered = try Self.decodeCrossings(&r, cid, watermark: record.deliveredPosition)
                let history = WatermarkHistory(read: read, delivered: delivered)
                guard history != WatermarkHistory(implied: record) else {
                    throw SnapshotError("\(cid): a history the record implies at slot \(slot)")
                }
                channels[ci].store(history, slot: Int32(slot))
            }
        }
    }

    /// Reads the members' own watermarks (version 6).
    private mutating func decodeOwnWatermarks(_ r: inout SnapshotReader) throws(SnapshotError) {
        for ci in channels.indices {
            let cid = channels[ci].cid
            let count = Int64(channels[ci].messageIDs.count)
            var previous = -1
            for _ in 0..<(try r.count("own watermarks")) {
                let slot = try r.uint()
                guard slot < UInt64(channels[ci].members.count), Int(slot) > previous else {
                    throw SnapshotError("\(cid): bad own watermarks slot \(slot)")
                }
                previous = Int(slot)
                let read = try r.int()
                let time = try r.int()
                let delivered = try r.int()
                guard (-1..<count).contains(read), (-1..<count).contains(delivered) else {
                    throw SnapshotError("\(cid): own watermarks out of range at slot \(slot)")
                }
                var own = OwnWatermarks(public: channels[ci].members[Int(slot)])
                (own.readPosition, own.readTime, own.deliveredPosition) = (Int32(read), time, Int32(delivered))
                guard !own.agree(with: channels[ci].members[Int(slot)]) else {
                    throw SnapshotError("\(cid): own watermarks the record implies at slot \(slot)")
                }
                channels[ci].own[Int32(slot)] = own
            }
        }
    }

    /// Reads the threads' participants (version 5).
    private mutating func decodeParticipants(_ r: inout SnapshotReader, version: UInt8) throws(SnapshotError) {
        for ci in channels.indices {
            let cid = channels[ci].cid
            for t in channels[ci].threads.indices {
                let parent = channels[ci].threads[t].parent
                func isThreadMessage(_ position: UInt64) -> Bool {
                    position == UInt64(parent)
                        || (position < UInt64(channels[ci].messageIDs.count) && channels[ci].thread(ofReply: Int32(position)) == t)
                }
                for _ in 0..<(try r.count("participants")) {
                    let user = try r.uint()
                    let read = try r.uint()
                    let delivered = try r.uint()
                    let readTime = try r.int()
                    let deliveredTime = try r.int()
                    let stamp = try r.uint()
                    let joinedAt = version >= 6 ? try r.uint() : UInt64(parent)
                    let ownRead = version >= 6 ? try r.uint() : read
                    let ownReadTime = version >= 6 ? try r.int() : readTime
                    let ownDelivered = version >= 6 ? try r.uint() : delivered
                    // Delivered may be behind read: a read shown while delivery receipts are hidden (rule 19).
                    guard user < UInt64(users.count), channels[ci].threads[t].participant(UInt32(user)) == nil,
                        isThreadMessage(read), isThreadMessage(delivered), stamp < UInt64(Int64.max),
                        isThreadMessage(joinedAt), isThreadMessage(ownRead), isThreadMessage(ownDelivered)
                    else { throw SnapshotError("\(cid): bad thread participant") }
                    func watermark(_ position: UInt64) -> Int32 { position == UInt64(parent) ? -1 : Int32(position) }
                    let history = WatermarkHistory(
                        read: try Self.decodeCrossings(&r, cid, watermark: watermark(read)),
                        delivered: try Self.decodeCrossings(&r, cid, watermark: watermark(delivered)))
                    channels[ci].threads[t].participants.append(ThreadMember(
                        user: UInt32(user), readPosition: Int32(read), deliveredPosition: Int32(delivered), readTime: readTime,
                        deliveredTime: deliveredTime, readStamp: Int64(stamp), joinedAt: Int32(joinedAt), history: history,
                        ownRead: Int32(ownRead), ownReadTime: ownReadTime, ownDelivered: Int32(ownDelivered)))
                    channels[ci].participation[UInt32(user), default: []].append(Int32(t))
                    channels[ci].nextReadStamp = max(channels[ci].nextReadStamp, Int64(stamp) + 1)
                }
            }
        }
    }

    /// One watermark's crossings: positions increasing, the last at `watermark`, none for -1.
    private static func decodeCrossings(_ r: inout SnapshotReader, _ cid: String, watermark: Int32)
        throws(SnapshotError) -> Crossings
    {
        let count = try r.count("crossings")
        guard count <= Crossings.capacity else { throw SnapshotError("\(cid): \(count) crossings") }
        var crossings = Crossings()
        var previous: Int64 = -1
        for _ in 0..<count {
            let position = try r.uint()
            let time = try r.int()
            guard Int64(position) > previous, position <= UInt64(max(watermark, 0)) else {
                throw SnapshotError("\(cid): bad crossing at \(position)")
            }
            previous = Int64(position)
            crossings.append(Int32(position), time)
        }
        guard (count == 0) == (watermark < 0), count == 0 || previous == Int64(watermark) else {
            throw SnapshotError("\(cid): crossings that end off the watermark")
        }
        return crossings
    }

    /// Reads the mentions (version 4) and rebuilds each channel's mention index.
    private mutating func decodeMentions(_ r: inout SnapshotReader) throws(SnapshotError) {
        for ci in channels.indices {
            let cid = channels[ci].cid
            var previous: Int32 = -1
            for _ in 0..<(try r.count("mentions")) {
                let position = try r.uint()
                guard position < UInt64(channels[ci].messageIDs.count), Int32(position) > previous else {
                    throw SnapshotError("\(cid): bad mention position \(position)")
                }
                let at = Int32(position)
                previous = at
                let info = channels[ci].messageInfo[Int(at)]
                var mentioned: [UInt32] = []
                for _ in 0..<(try r.count("mentioned users")) {
                    let user = try r.uint()
                    guard user < UInt64(users.count), UInt32(user) != info & ChannelState.senderMask,
                        !mentioned.contains(UInt32(user))
                    else { throw SnapshotError("\(cid): bad mentioned user at \(position)") }
                    mentioned.append(UInt32(user))
                }
                guard !mentioned.isEmpty else { throw SnapshotError("\(cid): empty mention at \(position)") }
                channels[ci].mentionedUsers[at] = mentioned
                if ChannelState.isCountable(info) && channels[ci].inChannel(at) {
                    for user in mentioned { channels[ci].mentions[user, default: []].append(at) }
                }
            }
        }
    }

    private static func decodeChannel(_ cid: String, _ r: inout SnapshotReader, _ users: [String], version: UInt8)
        throws(SnapshotError) -> ChannelState
    {
        var channel = ChannelState(cid: cid)
        let messageCount = try r.count("messages")
        channel.messageIDs.reserveCapacity(messageCount)
        channel.messageInfo.reserveCapacity(messageCount)
        for position in 0..<Int32(messageCount) {
            let id = try r.string("message id")
            let info = try r.uint()
            guard info <= UInt64(UInt32.max), Int(UInt32(info) & ChannelState.senderMask) < users.count else {
                throw SnapshotError("\(cid): message \(id) has a bad sender")
            }
            // An empty id is a message a truncation took (version 7): deleted, in no index.
            let gone = id.isEmpty
            guard !gone || (version >= 7 && UInt32(info) & ChannelState.deletedBit != 0) else {
                throw SnapshotError("\(cid): a message without an id at \(position)")
            }
            guard gone || channel.messageIndex.position(of: id, in: channel.messageIDs) == nil else {
                throw SnapshotError("\(cid): duplicate message \(id)")
            }
            var root: Int32?
            var shown = true
            if version >= 5, case let parent = try r.uint(), parent > 0 {
                guard parent <= UInt64(position), channel.thread(ofReply: Int32(parent - 1)) == nil else {
                    throw SnapshotError("\(cid): message \(id) has a bad parent")
                }
                root = Int32(parent - 1)
                let byte = try r.byte()
                guard byte <= 1 else { throw SnapshotError("\(cid): message \(id) has a bad show_in_channel") }
                shown = byte == 1
            }
            channel.messageIDs.append(id)
            channel.messageInfo.append(UInt32(info))
            if !gone { channel.messageIndex.insert(position, in: channel.messageIDs) }
            if shown { channel.latest = position } else { channel.threadOnly.insert(position) }
            if let root {
                if channel.thread(ofParent: root) == nil {
                    channel.threadOfParent[root] = Int32(channel.threads.count)
                    channel.threads.append(ThreadState(parent: root))
                }
                let t = channel.thread(ofParent: root)!
                channel.threadOfReply[position] = Int32(t)
                channel.threads[t].replies.append(position)
            }
        }
        channel.rebuildMessageCounts()
        var current: [Int32] = []
        var loadedStamps: [UInt64] = []
        for _ in 0..<(try r.count("members")) {
            let user = try r.uint()
            let read = try r.int()
            let delivered = try r.int()
            let isMember = try r.byte()
            let readTime = try r.int()
            let deliveredTime = try r.int()
            let stamp = version >= 3 ? try r.uint() : 0
            let joinedAt = version >= 6 ? Int64(try r.uint()) - 1 : -1
            guard user < UInt64(users.count), (-1..<Int64(messageCount)).contains(read),
                // Delivered may be behind read: a read shown while delivery receipts are hidden (rule 19).
                (-1..<Int64(messageCount)).contains(delivered), isMember <= 1,
                stamp < UInt64(Int64.max), joinedAt <= min(read, delivered)
            else { throw SnapshotError("\(cid): bad member record") }
            let record = MemberState(
                user: UInt32(user), readPosition: Int32(read), deliveredPosition: Int32(delivered),
                isMember: isMember == 1, readTime: readTime, deliveredTime: deliveredTime, joinedAt: Int32(joinedAt),
                readStamp: 0)
            loadedStamps.append(stamp)
            guard channel.slot(of: record.user) == nil else { throw SnapshotError("\(cid): duplicate member") }
            channel.slots.insert(Int32(channel.members.count), user: record.user, members: channel.members)
            if record.isMember {
                channel.memberCount += 1
                current.append(Int32(channel.members.count))
            }
            channel.members.append(record)
        }
        // A record keeps 32 bits of stamp: larger ones (64 bits in the snapshot) are ranked, in their order.
        let ranked = loadedStamps.allSatisfy { $0 <= UInt64(UInt32.max) } ? nil : loadedStamps.sorted()
        for (slot, stamp) in loadedStamps.enumerated() {
            channel.members[slot].readStamp = Int64(ranked.map { ChannelState.lowerBound($0, stamp) } ?? Int(stamp))
        }
        channel.rebuildMemberCounts()
        if version < 3 { restamp(&channel.members, users) }
        // Every record's stamp, sorted: unique, and the next one is past the largest.
        let stamps = channel.members.map(\.readStamp).sorted()
        for i in stamps.indices.dropFirst() where stamps[i] == stamps[i - 1] {
            throw SnapshotError("\(cid): read stamp \(stamps[i]) twice")
        }
        channel.nextReadStamp = (stamps.last ?? -1) + 1
        let members = channel.members
        current.sort { ReaderList.older(ReaderList.key($0, members), ReaderList.key($1, members)) }
        channel.readers = ReaderList(sorted: current)
        channel.memberOrder = MemberOrder(
            sorted: current.map { members[Int($0)].user }.sorted { users[Int($0)] < users[Int($1)] })
        return channel
    }

    /// Read stamps for records from a snapshot without them (versions 1 and
    /// 2): 0, 1, 2, … in the order of read time, then user id descending, so
    /// that readers with equal times list by user id.
    private static func restamp(_ members: inout [MemberState], _ users: [String]) {
        let order = members.indices.sorted { a, b in
            let x = members[a]
            let y = members[b]
            return x.readTime != y.readTime ? x.readTime < y.readTime : users[Int(x.user)] > users[Int(y.user)]
        }
        for (stamp, slot) in order.enumerated() { members[slot].readStamp = Int64(stamp) }
    }
}
