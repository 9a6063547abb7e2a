import EventBusCore
import ReceiptReducer

/// The receipt semantics done the obvious way: arrays, loops, no
/// clever structures. The property tests hold ``ReceiptReducer`` to it.
struct ReferenceModel {
    struct Message {
        var id: String
        var sender: String
        var regular: Bool
        var silent: Bool
        var deleted = false
        /// Taken by a truncation (rule 20): no longer known by its id.
        var gone = false
        /// Forgotten by retention (rule 25): no longer known by its id, but still counted.
        var forgotten = false
        /// The users it mentions, as given.
        var mentioned: [String] = []
        /// For a thread reply, the position of its thread's parent (a channel message).
        var parent: Int? = nil
        /// Whether a reply is also shown in the channel.
        var shown = false
        /// Whether it is in the channel: not a reply, or a reply shown there.
        var inChannel: Bool { parent == nil || shown }
    }

    /// A thread: its parent's position, its replies' positions and its participants' thread watermarks.
    struct Thread {
        var parent: Int
        var replies: [Int] = []
        var participants: [Member] = []
    }

    struct Member {
        var user: String
        var read: Int
        var delivered: Int
        var readTime: String?
        var deliveredTime: String?
        var isMember: Bool
        /// When the read watermark last moved, in apply order (``ReferenceModel/moves``).
        var readMove: Int
        var muted = false
        var countUnread = CountPreference.all
        /// The forward moves of each watermark still in effect, the last three (rule 13).
        var readCrossings: [Crossing] = []
        var deliveredCrossings: [Crossing] = []
        /// The latest message when they joined (a thread: the thread message they joined after);
        /// they count for the messages after it only (rule 8).
        var joinedAt = -1
        /// The member's own watermarks (rules 6, 18, 19): `nil` while they are the public ones.
        var ownRead: Int? = nil
        var ownReadTime: String?? = nil
        var ownDelivered: Int? = nil
        /// The own read watermark and its time: what the member's badge counts from.
        var myRead: Int { ownRead ?? read }
        var myReadTime: String? { ownReadTime ?? readTime }
        var myDelivered: Int { ownDelivered ?? delivered }
        /// Whether they hid the channel (rule 20).
        var hidden = false
        /// Whether a hard `user.deleted` erased the record (rule 22).
        var erased = false
    }

    /// A watermark's forward move still in effect: it passed the messages up to
    /// `position` (after the previous crossing's) at `time`.
    struct Crossing {
        var position: Int
        var time: String?
    }

    /// Rule 13: a watermark remembers its last three forward moves.
    static let crossingsKept = 3

    /// A move forward: one more crossing, the oldest forgotten past three.
    static func forward(_ crossings: inout [Crossing], _ position: Int, _ time: String?) {
        crossings.append(Crossing(position: position, time: time))
        if crossings.count > crossingsKept { crossings.removeFirst() }
    }

    /// When a watermark passed the message at `position`: the first crossing at or after it.
    static func passed(_ crossings: [Crossing], _ position: Int) -> String? {
        crossings.first { $0.position >= position }?.time
    }

    struct Channel {
        var cid: String
        var messages: [Message] = []
        var members: [Member] = []
        var threads: [Thread] = []
        /// Users banned from acking here (rule 23).
        var banned: Set<String> = []
        /// How many of the oldest messages retention forgot (rule 25).
        var forgottenCount = 0

        /// Who the receipts of the message at `p` count: the current members other
        /// than its sender who joined before it, or for a reply its thread's
        /// participants who are members now and joined the thread before it.
        func others(_ p: Int) -> [Member] {
            let sender = messages[p].sender
            if let t = thread(ofReply: p) {
                return threads[t].participants.filter { current($0.user) != nil && $0.user != sender && $0.joinedAt < p }
            }
            return members.filter { $0.isMember && $0.user != sender && $0.joinedAt < p }
        }

        /// The last message in the channel (a reply not shown there is not), -1 for none.
        var latest: Int { messages.lastIndex { $0.inChannel } ?? -1 }

        func thread(ofReply p: Int) -> Int? { threads.firstIndex { $0.replies.contains(p) } }

        /// Countable replies of thread `t` after the participant's read watermark, not theirs.
        func unreadReplies(_ t: Int, _ m: Member, own: Bool = true) -> Int {
            threads[t].replies.filter { p in
                let msg = messages[p]
                return p > (own ? m.myRead : m.read) && msg.regular && !msg.silent && !msg.deleted && msg.sender != m.user
            }.count
        }

        /// The threads of the channel with unread replies for `user`, by parent position.
        func unreadThreads(_ user: String) -> [Int] {
            threads.indices.filter { t in
                guard let m = threads[t].participants.first(where: { $0.user == user }) else { return false }
                return unreadReplies(t, m) > 0
            }.sorted { threads[$0].parent < threads[$1].parent }
        }

        /// The thread message before `p`: the reply before it, or the parent.
        func threadMessage(_ t: Int, before p: Int) -> Int {
            threads[t].replies.last { $0 < p } ?? threads[t].parent
        }

        /// A thread watermark's message id: null at the parent.
        func threadID(_ t: Int, at p: Int) -> JSONValue { p == threads[t].parent ? .null : .string(messages[p].id) }

        func index(of messageID: String) -> Int? {
            messages.firstIndex { $0.id == messageID && !$0.gone && !$0.forgotten }
        }
        func member(_ user: String) -> Int? { members.firstIndex { $0.user == user } }
        func current(_ user: String) -> Int? { members.firstIndex { $0.user == user && $0.isMember } }
        func id(at position: Int) -> JSONValue {
            position >= 0 && !messages[position].gone && !messages[position].forgotten ? .string(messages[position].id) : .null
        }

        /// A member's badge: their unread messages and mentions, none while they hide the channel.
        func badge(_ m: Member) -> (Int, Int) { m.hidden ? (0, 0) : (unread(m), unreadMentions(m)) }

        func unread(_ m: Member, own: Bool = true) -> Int {
            var n = 0
            for p in messages.indices where p > (own ? m.myRead : m.read) {
                let msg = messages[p]
                if msg.regular && !msg.silent && !msg.deleted && msg.sender != m.user && msg.inChannel { n += 1 }
            }
            return n
        }

        func unreadMentions(_ m: Member) -> Int {
            var n = 0
            for p in messages.indices where p > m.myRead {
                let msg = messages[p]
                if msg.regular && !msg.silent && !msg.deleted && msg.sender != m.user && msg.inChannel
                    && msg.mentioned.contains(m.user)
                {
                    n += 1
                }
            }
            return n
        }

        func firstUnread(_ m: Member) -> Int? {
            // The first one the channel still keeps (rule 25).
            for p in messages.indices where p > m.myRead && !messages[p].forgotten {
                let msg = messages[p]
                if msg.regular && !msg.silent && !msg.deleted && msg.sender != m.user && msg.inChannel { return p }
            }
            return nil
        }
    }

    var channels: [Channel] = []
    /// Read watermark moves so far, over all channels: the order of the moves.
    var moves = 0
    /// Users with read / delivery receipts off.
    var readOff: Set<String> = []
    var deliveryOff: Set<String> = []
    /// Channel types with read / delivery events off.
    var typeReadOff: Set<String> = []
    var typeDeliveryOff: Set<String> = []
    /// Users banned from acking in every channel.
    var bannedEverywhere: Set<String> = []
    /// Rule 24: push counts on new messages in channels of at most this many members (0: never).
    var pushLimit = 0
    /// Rule 25: the messages a channel keeps at least (0: all).
    var retainLimit = 0

    func channelIndex(_ cid: String) -> Int? { channels.firstIndex { $0.cid == cid } }

    func totals(_ user: String) -> (total: Int, channels: Int, mentions: Int) {
        var total = 0
        var count = 0
        var mentions = 0
        for channel in channels {
            guard let i = channel.current(user) else { continue }
            let m = channel.members[i]
            if m.countUnread == .off || m.hidden { continue }
            let n = m.muted || m.countUnread == .mentions ? channel.unreadMentions(m) : channel.unread(m)
            total += n
            if n > 0 { count += 1 }
            mentions += channel.unreadMentions(m)
        }
        return (total, count, mentions)
    }

    /// The counts closing a `notification.*`.
    func counts(_ ch: Channel, _ m: Member) -> [(String, JSONValue)] {
        let (messages, mentions) = ch.badge(m)
        return [("unread_messages", .number(String(messages))), ("unread_mentions", .number(String(mentions)))]
            + totalsFields(m.user)
    }

    /// The user's totals closing a `notification.*`.
    func totalsFields(_ user: String) -> [(String, JSONValue)] {
        let t = totals(user)
        return [
            ("unread_channels", .number(String(t.channels))), ("total_unread_count", .number(String(t.total))),
            ("total_unread_mentions", .number(String(t.mentions))),
        ]
    }

    /// A `notification.*` telling `user`'s devices their counts (rule 21).
    func countsNotice(_ type: String, _ ch: Channel, _ user: String, extra: [(String, JSONValue)] = []) -> ReducerOutput {
        let fields: [(String, JSONValue)] = [("cid", .string(ch.cid)), ("user_id", .string(user))] + extra
        if let i = ch.current(user) {
            return Self.output("out", type, "@" + user, fields + counts(ch, ch.members[i]))
        }
        return Self.output("out", type, "@" + user, fields + totalsFields(user))
    }

    /// The current members' badges, by user id (to compare before and after a change).
    func badges(_ c: Int) -> [(String, (Int, Int))] {
        channels[c].members.filter(\.isMember).sorted { $0.user < $1.user }.map { ($0.user, channels[c].badge($0)) }
    }

    /// A notice of `type` to each member whose badge differs from `before`.
    func noticesForChanged(_ type: String, _ c: Int, _ before: [(String, (Int, Int))], extra: [(String, JSONValue)] = [])
        -> [ReducerOutput]
    {
        before.compactMap { user, badge in
            guard let i = channels[c].current(user), channels[c].badge(channels[c].members[i]) != badge else { return nil }
            return countsNotice(type, channels[c], user, extra: extra)
        }
    }

    /// Whether `user` may not ack in channel `c` (rule 23).
    func isBanned(_ user: String, _ c: Int) -> Bool { bannedEverywhere.contains(user) || channels[c].banned.contains(user) }

    static func time(_ t: String?) -> JSONValue { t.map { .string($0) } ?? .null }

    static func output(_ stage: String, _ type: String, _ subject: String, _ data: [(String, JSONValue)]) -> ReducerOutput {
        ReducerOutput(
            stage: stage, type: type, subject: subject,
            data: JSONValue.object(data.map { (key: $0.0, value: $0.1) }).serialized())
    }

    func reject(_ input: ReducerInput, _ cid: String, _ user: String?, _ message: String?, _ reason: String)
        -> ReducerOutput
    {
        var data: [(String, JSONValue)] = [
            ("seq", .number(String(input.seq))), ("type", .string(input.payload.type.wireName)), ("cid", .string(cid)),
        ]
        if let user { data.append(("user_id", .string(user))) }
        if let message { data.append(("message_id", .string(message))) }
        data.append(("reason", .string(reason)))
        return Self.output("diag", "receipt.rejected", cid, data)
    }

    /// Makes `user` a member; `false` when they already were.
    @discardableResult
    mutating func join(_ c: Int, _ user: String, _ time: String) -> Bool {
        if let i = channels[c].member(user) {
            if channels[c].members[i].erased {
                channels[c].members.remove(at: i)
            } else {
                defer { channels[c].members[i].isMember = true }
                return !channels[c].members[i].isMember
            }
        }
        let latest = channels[c].latest
        let joined = latest >= 0 ? [Crossing(position: latest, time: time)] : []
        channels[c].members.append(
            Member(
                user: user, read: latest, delivered: latest, readTime: latest >= 0 ? time : nil,
                deliveredTime: latest >= 0 ? time : nil, isMember: true, readMove: nextMove(),
                readCrossings: joined, deliveredCrossings: joined, joinedAt: latest))
        return true
    }

    /// Numbers a read watermark move.
    mutating func nextMove() -> Int {
        moves += 1
        return moves
    }

    /// Whether reader `a` lists before `b`: the later `last_read` first (the
    /// generator's times are all in the bus's format, which sorts as text),
    /// equal times by the later move.
    static func newer(_ a: Member, _ b: Member) -> Bool {
        let (x, y) = (a.readTime ?? "", b.readTime ?? "")
        return x != y ? x > y : a.readMove > b.readMove
    }

    /// A `message.read` to the channel: the watermark at `p`, time `time`, and the counts of `p`.
    func readEvent(_ c: Int, _ user: String, _ p: Int, _ time: String?) -> ReducerOutput {
        let ch = channels[c]
        return Self.output(
            "out", "message.read", ch.cid,
            [("cid", .string(ch.cid)), ("user_id", .string(user)), ("last_read_message_id", ch.id(at: p)), ("last_read", Self.time(time))]
                + receiptCounts(c, p, read: true))
    }

    /// What a watermark event carries for the message at `p` it points at (rule 26): `read_count`
    /// (a read's only) and `delivered_count` over those the message counts for, then `redacted`,
    /// the counts without the members whose receipts are hidden from others now, where they differ.
    /// Nothing for no message.
    func receiptCounts(_ c: Int, _ p: Int, read: Bool) -> [(String, JSONValue)] {
        let ch = channels[c]
        guard p >= 0, ch.id(at: p) != .null else { return [] }
        let type = String(ch.cid.prefix { $0 != ":" })
        func n(_ v: Int) -> JSONValue { .number(String(v)) }
        let readers = ch.others(p).filter { $0.read >= p }
        let delivered = ch.others(p).filter { $0.delivered >= p }
        let shownReaders = readers.count { !readOff.contains($0.user) && !typeReadOff.contains(type) }
        let shownDelivered = delivered.count { !deliveryOff.contains($0.user) && !typeDeliveryOff.contains(type) }
        var fields: [(String, JSONValue)] = read ? [("read_count", n(readers.count))] : []
        fields.append(("delivered_count", n(delivered.count)))
        var redacted: [(key: String, value: JSONValue)] = []
        if read && shownReaders != readers.count { redacted.append((key: "read_count", value: n(shownReaders))) }
        if shownDelivered != delivered.count { redacted.append((key: "delivered_count", value: n(shownDelivered))) }
        if !redacted.isEmpty { fields.append(("redacted", .object(redacted))) }
        return fields
    }

    /// `notification.mark_read` to the reader's devices, with their own watermark and counts.
    func markReadOutput(_ c: Int, _ i: Int) -> ReducerOutput {
        let ch = channels[c]
        let m = ch.members[i]
        return Self.output(
            "out", "notification.mark_read", "@" + m.user,
            [
                ("cid", .string(ch.cid)), ("user_id", .string(m.user)), ("last_read_message_id", ch.id(at: m.myRead)),
                ("last_read", Self.time(m.myReadTime)),
            ] + counts(ch, m))
    }

    /// The SEQ of the input being applied (the audits name it).
    var applying: UInt64 = 0

    /// The audit of an ack made with that receipt hidden (rule 19), on `diag`.
    func suppressed(_ c: Int, _ user: String, read: Bool) -> ReducerOutput {
        Self.output(
            "diag", "receipt.suppressed", channels[c].cid,
            [
                ("seq", .number(String(applying))), ("type", .string(read ? "message.read" : "message.delivered")),
                ("reason", .string((read ? readOff : deliveryOff).contains(user) ? "user_setting" : "channel_type")),
                ("policy", .string(read ? "read-privacy" : "delivery-privacy")),
            ])
    }

    /// Whether `user`'s receipts of a kind are shown in the channel now (their setting, the type's toggle).
    func shows(read: Bool, _ c: Int, _ user: String) -> Bool {
        let type = String(channels[c].cid.prefix { $0 != ":" })
        return read
            ? !readOff.contains(user) && !typeReadOff.contains(type)
            : !deliveryOff.contains(user) && !typeDeliveryOff.contains(type)
    }

    /// Drops the own watermarks of member `i` when they are the public ones.
    mutating func settleOwn(_ c: Int, _ i: Int) {
        let m = channels[c].members[i]
        if m.myRead == m.read && m.myReadTime == m.readTime && m.myDelivered == m.delivered {
            channels[c].members[i].ownRead = nil
            channels[c].members[i].ownReadTime = nil
            channels[c].members[i].ownDelivered = nil
        }
    }

    /// Rule 25: once a channel keeps an eighth more than ``retainLimit`` messages,
    /// the oldest are forgotten down to that many, never past its latest channel
    /// message; a thread goes with its parent, its replies shown in the channel
    /// staying as channel messages and the others gone.
    mutating func retain(_ c: Int) {
        let held = channels[c].messages.count - channels[c].forgottenCount
        guard retainLimit > 0, held >= retainLimit + max(1, retainLimit / 8) else { return }
        let k = min(channels[c].messages.count - retainLimit, channels[c].latest)
        guard k > channels[c].forgottenCount else { return }
        for p in channels[c].forgottenCount..<k { channels[c].messages[p].forgotten = true }
        var kept: [Thread] = []
        for thread in channels[c].threads {
            guard thread.parent < k else {
                kept.append(thread)
                continue
            }
            for r in thread.replies where r >= k {
                if channels[c].messages[r].shown {
                    channels[c].messages[r].parent = nil
                } else {
                    channels[c].messages[r].gone = true
                    channels[c].messages[r].deleted = true
                }
            }
        }
        channels[c].threads = kept
        channels[c].forgottenCount = k
    }

    mutating func apply(_ input: ReducerInput) -> [ReducerOutput] {
        applying = input.seq
        let now = input.time ?? "1970-01-01T00:00:00.000Z"
        switch input.payload {
        case .channelCreated(let cid, let members):
            if channelIndex(cid) == nil { channels.append(Channel(cid: cid)) }
            let c = channelIndex(cid)!
            for user in members { join(c, user, now) }
            return []
        case .memberAdded(let cid, let user):
            guard let c = channelIndex(cid) else { return [reject(input, cid, user, nil, "unknown_channel")] }
            guard join(c, user, now) else { return [] }
            return [countsNotice("notification.added_to_channel", channels[c], user)]
        case .memberRemoved(let cid, let user):
            guard let c = channelIndex(cid) else { return [reject(input, cid, user, nil, "unknown_channel")] }
            guard let i = channels[c].current(user) else { return [] }
            channels[c].members[i].isMember = false
            channels[c].members[i].hidden = false
            return [countsNotice("notification.removed_from_channel", channels[c], user)]
        case .messageNew(let cid, let message):
            guard let c = channelIndex(cid) else {
                return [reject(input, cid, message.userID, message.id, "unknown_channel")]
            }
            guard channels[c].index(of: message.id) == nil else { return [] }
            var root: Int?
            if let parentID = message.parentID {
                guard let parent = channels[c].index(of: parentID) else {
                    return [reject(input, cid, message.userID, parentID, "unknown_message")]
                }
                root = channels[c].messages[parent].parent ?? parent
            }
            channels[c].messages.append(
                Message(
                    id: message.id, sender: message.userID, regular: message.kind == .regular, silent: message.silent,
                    mentioned: message.mentionedUsers, parent: root, shown: message.showInChannel))
            let p = channels[c].messages.count - 1
            // A channel message shows the channel again to those who hid it (rule 20).
            if channels[c].messages[p].inChannel {
                for i in channels[c].members.indices { channels[c].members[i].hidden = false }
            }
            if let root { addReply(c, p, root: root, message) }
            let data: JSONValue =
                input.data
                ?? .object([
                    (key: "cid", value: .string(cid)),
                    (
                        key: "message",
                        value: .object([
                            (key: "id", value: .string(message.id)), (key: "user_id", value: .string(message.userID)),
                            (key: "created_at", value: .string(message.createdAt)),
                            (key: "type", value: .string(message.kind.rawValue)), (key: "silent", value: .bool(message.silent)),
                        ] + (message.mentionedUsers.isEmpty
                            ? [] : [(key: "mentioned_users", value: .array(message.mentionedUsers.map { .string($0) }))])
                          + (message.parentID.map { [(key: "parent_id", value: .string($0))] } ?? [])
                          + (message.parentID != nil ? [(key: "show_in_channel", value: .bool(message.showInChannel))] : []))
                    ),
                ])
            let event = ReducerOutput(stage: "out", type: "message.new", subject: cid, data: data.serialized())
            let msg = channels[c].messages[p]
            let members = channels[c].members.filter(\.isMember)
            defer { retain(c) }
            guard pushLimit > 0, members.count <= pushLimit, msg.regular, !msg.silent, msg.inChannel else { return [event] }
            return [event] + members.filter { $0.user != msg.sender }.map(\.user).sorted().map {
                countsNotice("notification.message_new", channels[c], $0, extra: [("message_id", .string(message.id))])
            }
        case .messageDeleted(let cid, let messageID):
            guard let c = channelIndex(cid) else { return [reject(input, cid, nil, messageID, "unknown_channel")] }
            guard let p = channels[c].index(of: messageID) else {
                return [reject(input, cid, nil, messageID, "unknown_message")]
            }
            guard !channels[c].messages[p].deleted else { return [] }
            // Whom it was unread for (rule 21).
            let msg = channels[c].messages[p]
            let affected = msg.regular && !msg.silent && msg.inChannel
                ? channels[c].members.filter {
                    $0.isMember && !$0.hidden && $0.user != msg.sender && $0.joinedAt < p && $0.myRead < p
                }.map(\.user).sorted()
                : []
            channels[c].messages[p].deleted = true
            let data: JSONValue =
                input.data ?? .object([(key: "cid", value: .string(cid)), (key: "message_id", value: .string(messageID))])
            return [ReducerOutput(stage: "out", type: "message.deleted", subject: cid, data: data.serialized())]
                + affected.map {
                    countsNotice("notification.message_deleted", channels[c], $0, extra: [("message_id", .string(messageID))])
                }
        case .messageDelivered(let cid, let user, let messageID, let at):
            guard let c = channelIndex(cid) else { return [reject(input, cid, user, messageID, "unknown_channel")] }
            guard let i = channels[c].current(user) else { return [reject(input, cid, user, messageID, "not_member")] }
            guard !isBanned(user, c) else { return [reject(input, cid, user, messageID, "banned")] }
            guard let p = channels[c].index(of: messageID) else {
                return [reject(input, cid, user, messageID, "unknown_message")]
            }
            if let t = channels[c].thread(ofReply: p) { return threadDelivered(c, t, user, p, at ?? now) }
            let m = channels[c].members[i]
            let ownMoved = p > m.myDelivered
            if ownMoved { channels[c].members[i].ownDelivered = p }
            defer { settleOwn(c, i) }
            guard p > m.delivered, ownMoved || shows(read: false, c, user) else { return [] }
            guard shows(read: false, c, user) else { return [suppressed(c, user, read: false)] }
            channels[c].members[i].delivered = p
            channels[c].members[i].deliveredTime = at ?? now
            Self.forward(&channels[c].members[i].deliveredCrossings, p, at ?? now)
            return [
                Self.output(
                    "out", "message.delivered", cid,
                    [
                        ("cid", .string(cid)), ("user_id", .string(user)), ("last_delivered_message_id", .string(messageID)),
                        ("last_delivered_at", .string(at ?? now)),
                    ] + receiptCounts(c, p, read: false))
            ]
        case .messageRead(let cid, let user, let messageID, let at):
            guard let c = channelIndex(cid) else { return [reject(input, cid, user, messageID, "unknown_channel")] }
            guard let i = channels[c].current(user) else { return [reject(input, cid, user, messageID, "not_member")] }
            guard !isBanned(user, c) else { return [reject(input, cid, user, messageID, "banned")] }
            guard let p = channels[c].index(of: messageID) else {
                return [reject(input, cid, user, messageID, "unknown_message")]
            }
            if let t = channels[c].thread(ofReply: p) { return threadRead(c, t, user, p, at ?? now) }
            return readUpTo(c, i, p, at ?? now)
        case .notificationMarkRead(let cid, let user, let at):
            guard let c = channelIndex(cid) else { return [reject(input, cid, user, nil, "unknown_channel")] }
            guard let i = channels[c].current(user) else { return [reject(input, cid, user, nil, "not_member")] }
            guard !isBanned(user, c) else { return [reject(input, cid, user, nil, "banned")] }
            return readUpTo(c, i, channels[c].latest, at ?? now)
        case .notificationMarkUnread(let cid, let user, let messageID):
            guard let c = channelIndex(cid) else { return [reject(input, cid, user, messageID, "unknown_channel")] }
            guard let i = channels[c].current(user) else { return [reject(input, cid, user, messageID, "not_member")] }
            guard !isBanned(user, c) else { return [reject(input, cid, user, messageID, "banned")] }
            guard let p = channels[c].index(of: messageID) else {
                return [reject(input, cid, user, messageID, "unknown_message")]
            }
            guard channels[c].messages[p].sender != user else {
                return [reject(input, cid, user, messageID, "own_message")]
            }
            if let t = channels[c].thread(ofReply: p) { return threadMarkUnread(c, t, user, p, now) }
            let target = channels[c].messages.indices.last { $0 < p && channels[c].messages[$0].inChannel } ?? -1
            guard target < channels[c].members[i].myRead else { return [] }
            // Private (rule 6): the own read watermark only; the public one never moves back.
            channels[c].members[i].ownDelivered = channels[c].members[i].myDelivered
            channels[c].members[i].ownRead = target
            channels[c].members[i].ownReadTime = .some(now)
            settleOwn(c, i)
            let ch = channels[c]
            let m = ch.members[i]
            return [
                Self.output(
                    "out", "notification.mark_unread", "@" + user,
                    [
                        ("cid", .string(cid)), ("user_id", .string(user)), ("first_unread_message_id", .string(messageID)),
                        ("last_read_message_id", ch.id(at: m.myRead)), ("last_read", Self.time(m.myReadTime)),
                    ] + counts(ch, m))
            ]
        case .notificationMarkAllRead(let user, let at):
            var outputs: [ReducerOutput] = []
            for c in channels.indices.sorted(by: { channels[$0].cid < channels[$1].cid }) {
                guard let i = channels[c].current(user), !isBanned(user, c) else { continue }
                outputs += readUpTo(c, i, channels[c].latest, at ?? now).filter { $0.type != "notification.mark_read" }
            }
            let t = totals(user)
            outputs.append(
                Self.output(
                    "out", "notification.mark_all_read", "@" + user,
                    [
                        ("user_id", .string(user)), ("last_read", .string(at ?? now)),
                        ("unread_channels", .number(String(t.channels))), ("total_unread_count", .number(String(t.total))),
                        ("total_unread_mentions", .number(String(t.mentions))),
                    ]))
            return outputs
        case .memberUpdated(let cid, let user, let muted, let countUnread):
            guard let c = channelIndex(cid) else { return [reject(input, cid, user, nil, "unknown_channel")] }
            guard let i = channels[c].current(user) else { return [reject(input, cid, user, nil, "not_member")] }
            if let muted { channels[c].members[i].muted = muted }
            if let countUnread { channels[c].members[i].countUnread = countUnread }
            return []
        case .userUpdated(let user, let delivery, let read):
            if let read { if read { readOff.remove(user) } else { readOff.insert(user) } }
            if let delivery { if delivery { deliveryOff.remove(user) } else { deliveryOff.insert(user) } }
            return []
        case .channelTypeUpdated(let name, let delivery, let read):
            if let read { if read { typeReadOff.remove(name) } else { typeReadOff.insert(name) } }
            if let delivery { if delivery { typeDeliveryOff.remove(name) } else { typeDeliveryOff.insert(name) } }
            return []
        default:
            return applyLife(input, now)
        }
    }

    /// Rules 20–23: a channel's and a user's life.
    mutating func applyLife(_ input: ReducerInput, _ now: String) -> [ReducerOutput] {
        switch input.payload {
        case .channelTruncated(let cid, let messageID):
            guard let c = channelIndex(cid) else { return [reject(input, cid, nil, messageID, "unknown_channel")] }
            var through = channels[c].messages.count - 1
            if let messageID {
                guard let p = channels[c].index(of: messageID) else { return [reject(input, cid, nil, messageID, "unknown_message")] }
                through = p
            }
            var taken = Set(channels[c].messages.indices.filter { $0 <= through && !channels[c].messages[$0].gone })
            for thread in channels[c].threads where thread.parent <= through {
                taken.formUnion(thread.replies.filter { !channels[c].messages[$0].gone })
            }
            guard !taken.isEmpty else { return [] }
            let before = badges(c)
            for p in taken {
                channels[c].messages[p].gone = true
                channels[c].messages[p].deleted = true
            }
            return noticesForChanged("notification.channel_truncated", c, before)
        case .channelHidden(let cid, let user, let clear):
            guard let c = channelIndex(cid) else { return [reject(input, cid, user, nil, "unknown_channel")] }
            guard let i = channels[c].current(user) else { return [reject(input, cid, user, nil, "not_member")] }
            var changed = !channels[c].members[i].hidden
            channels[c].members[i].hidden = true
            let latest = channels[c].latest
            if clear && latest > channels[c].members[i].myRead {
                channels[c].members[i].ownDelivered = channels[c].members[i].myDelivered
                channels[c].members[i].ownRead = latest
                channels[c].members[i].ownReadTime = .some(now)
                settleOwn(c, i)
                changed = true
            }
            return changed ? [countsNotice("notification.channel_hidden", channels[c], user)] : []
        case .channelVisible(let cid, let user):
            guard let c = channelIndex(cid) else { return [reject(input, cid, user, nil, "unknown_channel")] }
            guard let i = channels[c].current(user) else { return [reject(input, cid, user, nil, "not_member")] }
            guard channels[c].members[i].hidden else { return [] }
            channels[c].members[i].hidden = false
            return [countsNotice("notification.channel_visible", channels[c], user)]
        case .channelDeleted(let cid):
            guard let c = channelIndex(cid) else { return [reject(input, cid, nil, nil, "unknown_channel")] }
            let members = channels[c].members.filter(\.isMember).map(\.user).sorted()
            let gone = channels.remove(at: c)
            return members.map { countsNotice("notification.channel_deleted", Channel(cid: gone.cid), $0) }
        case .userDeleted(let user, let hard):
            var outputs: [ReducerOutput] = []
            if hard {
                for c in channels.indices {
                    let theirs = channels[c].messages.indices.filter { p in
                        let m = channels[c].messages[p]
                        return m.sender == user && m.regular && !m.silent && !m.deleted && m.inChannel && !m.forgotten
                    }
                    guard !theirs.isEmpty else { continue }
                    let before = badges(c).filter { $0.0 != user }
                    for p in theirs { channels[c].messages[p].deleted = true }
                    outputs += noticesForChanged(
                        "notification.user_deleted", c, before, extra: [("deleted_user_id", .string(user))])
                }
            }
            for c in channels.indices {
                guard let i = channels[c].member(user) else { continue }
                channels[c].members[i].isMember = false
                channels[c].members[i].hidden = false
                if hard { channels[c].members[i].erased = true }  // the channels they had left too
            }
            return outputs
        case .userBanned(let user, let cid), .userUnbanned(let user, let cid):
            let banned = input.payload.type == .userBanned
            guard let cid else {
                if banned { bannedEverywhere.insert(user) } else { bannedEverywhere.remove(user) }
                return []
            }
            guard let c = channelIndex(cid) else { return [reject(input, cid, user, nil, "unknown_channel")] }
            if banned { channels[c].banned.insert(user) } else { channels[c].banned.remove(user) }
            return []
        default:
            preconditionFailure("not a life event: \(input.payload.type)")
        }
    }

    /// The views the reducer must offer for a query, computed naively: every
    /// key whose view hides someone, with that view.
    func views(method: String, params: JSONValue) -> [String: JSONValue] {
        guard method != "unread_counts", let cid = params["cid"]?.stringValue, let viewer = params["viewer"]?.stringValue,
            let c = channelIndex(cid)
        else { return [:] }
        let type = String(cid.prefix { $0 != ":" })
        let members = channels[c].members.filter(\.isMember)
        var keys: [(String, Bool, Bool, Bool)] = [("read", true, false, false), ("delivery", false, true, false), ("read+delivery", true, true, false)]
        if members.count == 2 && readOff.contains(viewer) {
            keys += [("read+reciprocity", true, false, true), ("read+delivery+reciprocity", true, true, true)]
        }
        var result: [String: JSONValue] = [:]
        for (key, read, delivery, reciprocal) in keys {
            let hide: (String) -> (Bool, Bool) = { user in
                guard user != viewer else { return (false, false) }
                let r = read && (reciprocal || self.readOff.contains(user) || self.typeReadOff.contains(type))
                let d = delivery && (self.deliveryOff.contains(user) || self.typeDeliveryOff.contains(type))
                return (r, d)
            }
            if case .success(let view) = query(method: method, params: params, hide: hide),
                (view["hidden_member_count"]?.int64Value ?? 0) > 0
            {
                result[key] = view
            }
        }
        return result
    }

    // MARK: Threads

    /// A thread participant who starts at `p` (the parent: nothing read) at `time`.
    mutating func participant(_ user: String, _ p: Int, parent: Int, _ time: String?) -> Member {
        let passed = p == parent ? [] : [Crossing(position: p, time: time)]
        return Member(
            user: user, read: p, delivered: p, readTime: time, deliveredTime: time, isMember: true, readMove: nextMove(),
            readCrossings: passed, deliveredCrossings: passed, joinedAt: p)
    }

    /// Rule 14: the reply at `p` joins the thread of `root`; the author (on the first reply), the users it
    /// mentions and its sender take part if members now; nobody's thread watermarks move.
    mutating func addReply(_ c: Int, _ p: Int, root: Int, _ message: NewMessage) {
        let t: Int
        if let existing = channels[c].threads.firstIndex(where: { $0.parent == root }) {
            t = existing
        } else {
            channels[c].threads.append(Thread(parent: root))
            t = channels[c].threads.count - 1
            let author = channels[c].messages[root].sender
            if channels[c].current(author) != nil {
                channels[c].threads[t].participants.append(participant(author, root, parent: root, nil))
            }
        }
        let before = channels[c].threadMessage(t, before: p)
        channels[c].threads[t].replies.append(p)
        func takesPart(_ user: String) -> Bool { channels[c].threads[t].participants.contains { $0.user == user } }
        var mentioned: [String] = []
        for user in message.mentionedUsers where user != message.userID && !mentioned.contains(user) { mentioned.append(user) }
        for user in mentioned where channels[c].current(user) != nil && !takesPart(user) {
            channels[c].threads[t].participants.append(participant(user, before, parent: root, message.createdAt))
        }
        // Sending is not reading (rule 3): a new replier joins before their reply.
        let sender = message.userID
        if channels[c].current(sender) != nil && !takesPart(sender) {
            channels[c].threads[t].participants.append(participant(sender, before, parent: root, message.createdAt))
        }
    }

    /// `unread_threads` of `user`: over the channels they are a member of now.
    func unreadThreadCount(_ user: String) -> Int {
        channels.filter { $0.current(user) != nil }.reduce(0) { $0 + $1.unreadThreads(user).count }
    }

    func threadNotification(_ c: Int, _ t: Int, _ m: Member, _ type: String, first: Int?) -> ReducerOutput {
        let ch = channels[c]
        var data: [(String, JSONValue)] = [
            ("cid", .string(ch.cid)), ("user_id", .string(m.user)), ("parent_id", .string(ch.messages[ch.threads[t].parent].id)),
        ]
        if let first { data.append(("first_unread_message_id", .string(ch.messages[first].id))) }
        data += [
            ("last_read_message_id", ch.threadID(t, at: m.myRead)), ("last_read", Self.time(m.myReadTime)),
            ("unread_replies", .number(String(ch.unreadReplies(t, m)))),
            ("unread_threads", .number(String(unreadThreadCount(m.user)))),
        ]
        return Self.output("out", type, "@" + m.user, data)
    }

    /// A thread `message.read` or `message.delivered` to the channel.
    func threadEvent(_ c: Int, _ t: Int, _ user: String, read: Bool, _ p: Int, _ time: String) -> ReducerOutput {
        let ch = channels[c]
        return Self.output(
            "out", read ? "message.read" : "message.delivered", ch.cid,
            [
                ("cid", .string(ch.cid)), ("user_id", .string(user)), ("parent_id", .string(ch.messages[ch.threads[t].parent].id)),
                (read ? "last_read_message_id" : "last_delivered_message_id", ch.threadID(t, at: p)),
                (read ? "last_read" : "last_delivered_at", .string(time)),
            ] + (p == ch.threads[t].parent ? [] : receiptCounts(c, p, read: read)))
    }

    /// A thread read, as a channel's (rules 18, 19): own first, public if shown.
    mutating func threadRead(_ c: Int, _ t: Int, _ user: String, _ p: Int, _ time: String) -> [ReducerOutput] {
        guard let i = channels[c].threads[t].participants.firstIndex(where: { $0.user == user }) else { return [] }
        let m = channels[c].threads[t].participants[i]
        let ownMoved = p > m.myRead
        guard ownMoved || p > m.read else { return [] }
        if ownMoved {
            channels[c].threads[t].participants[i].ownDelivered = max(m.myDelivered, p)
            channels[c].threads[t].participants[i].ownRead = p
            channels[c].threads[t].participants[i].ownReadTime = .some(time)
        }
        var outputs: [ReducerOutput] = []
        if p > m.read {
            if shows(read: true, c, user) {
                channels[c].threads[t].participants[i].read = p
                channels[c].threads[t].participants[i].readTime = time
                channels[c].threads[t].participants[i].readMove = nextMove()
                Self.forward(&channels[c].threads[t].participants[i].readCrossings, p, time)
                if p > m.delivered && shows(read: false, c, user) {
                    channels[c].threads[t].participants[i].delivered = p
                    channels[c].threads[t].participants[i].deliveredTime = time
                    Self.forward(&channels[c].threads[t].participants[i].deliveredCrossings, p, time)
                }
                outputs.append(threadEvent(c, t, user, read: true, p, time))
            } else if ownMoved {
                outputs.append(suppressed(c, user, read: true))
            }
        }
        if ownMoved {
            outputs.append(threadNotification(c, t, channels[c].threads[t].participants[i], "notification.mark_read", first: nil))
        }
        return outputs
    }

    mutating func threadDelivered(_ c: Int, _ t: Int, _ user: String, _ p: Int, _ time: String) -> [ReducerOutput] {
        guard let i = channels[c].threads[t].participants.firstIndex(where: { $0.user == user }) else { return [] }
        let m = channels[c].threads[t].participants[i]
        let ownMoved = p > m.myDelivered
        if ownMoved { channels[c].threads[t].participants[i].ownDelivered = p }
        guard p > m.delivered, ownMoved || shows(read: false, c, user) else { return [] }
        guard shows(read: false, c, user) else { return [suppressed(c, user, read: false)] }
        channels[c].threads[t].participants[i].delivered = p
        channels[c].threads[t].participants[i].deliveredTime = time
        Self.forward(&channels[c].threads[t].participants[i].deliveredCrossings, p, time)
        return [threadEvent(c, t, user, read: false, p, time)]
    }

    /// A thread mark unread: private, the own read watermark only (rule 6).
    mutating func threadMarkUnread(_ c: Int, _ t: Int, _ user: String, _ p: Int, _ time: String) -> [ReducerOutput] {
        let target = channels[c].threadMessage(t, before: p)
        guard let i = channels[c].threads[t].participants.firstIndex(where: { $0.user == user }),
            target < channels[c].threads[t].participants[i].myRead
        else { return [] }
        channels[c].threads[t].participants[i].ownDelivered = channels[c].threads[t].participants[i].myDelivered
        channels[c].threads[t].participants[i].ownRead = target
        channels[c].threads[t].participants[i].ownReadTime = .some(time)
        return [threadNotification(c, t, channels[c].threads[t].participants[i], "notification.mark_unread", first: p)]
    }

    /// A read to `p` (rules 1, 2, 6, 18, 19): the own watermark, and the public one if the read is shown.
    mutating func readUpTo(_ c: Int, _ i: Int, _ p: Int, _ time: String) -> [ReducerOutput] {
        let m = channels[c].members[i]
        let ownMoved = p > m.myRead
        guard ownMoved || p > m.read else { return [] }
        if ownMoved {
            channels[c].members[i].ownDelivered = max(m.myDelivered, p)
            channels[c].members[i].ownRead = p
            channels[c].members[i].ownReadTime = .some(time)
        }
        var outputs: [ReducerOutput] = []
        if p > m.read {
            if shows(read: true, c, m.user) {
                channels[c].members[i].read = p
                channels[c].members[i].readTime = time
                channels[c].members[i].readMove = nextMove()
                Self.forward(&channels[c].members[i].readCrossings, p, time)
                if p > m.delivered && shows(read: false, c, m.user) {
                    channels[c].members[i].delivered = p
                    channels[c].members[i].deliveredTime = time
                    Self.forward(&channels[c].members[i].deliveredCrossings, p, time)
                }
                outputs.append(readEvent(c, m.user, p, time))
            } else if ownMoved {
                outputs.append(suppressed(c, m.user, read: true))
            }
        }
        settleOwn(c, i)
        if ownMoved { outputs.append(markReadOutput(c, i)) }
        return outputs
    }

    // MARK: Queries

    struct Failure: Error { var code: String }

    func query(method: String, params: JSONValue, hide: (String) -> (Bool, Bool) = { _ in (false, false) })
        -> Result<JSONValue, Failure>
    {
        func n(_ v: Int) -> JSONValue { .number(String(v)) }
        func obj(_ m: [(String, JSONValue)]) -> JSONValue { .object(m.map { (key: $0.0, value: $0.1) }) }
        switch method {
        case "channel_state":
            guard let cid = params["cid"]?.stringValue, params["viewer"]?.stringValue != nil else {
                return .failure(Failure(code: "bad_request"))
            }
            var pageSize = 1000
            if let size = params["page_size"], size != .null {
                guard let s = size.int64Value, (1...1000).contains(s) else { return .failure(Failure(code: "bad_request")) }
                pageSize = Int(s)
            }
            var after: String?
            if let cursor = params["cursor"], cursor != .null {
                guard let text = cursor.stringValue, text.hasPrefix("u:"), text.count > 2 else {
                    return .failure(Failure(code: "bad_request"))
                }
                after = String(text.dropFirst(2))
            }
            guard let c = channelIndex(cid) else { return .failure(Failure(code: "not_found")) }
            let ch = channels[c]
            let all = ch.members.filter(\.isMember).sorted { $0.user < $1.user }
            // Hidden members are counted over the whole channel, not the page.
            let hidden = all.filter { hide($0.user).0 || hide($0.user).1 }.count
            let remaining = all.filter { m in after.map { m.user > $0 } ?? true }
            let page = Array(remaining.prefix(pageSize))
            let next: JSONValue = remaining.count > pageSize ? .string("u:" + page[page.count - 1].user) : .null
            let viewer = params["viewer"]?.stringValue
            let members = page.map { m in
                let (r, d) = hide(m.user)
                var fields: [(String, JSONValue)] = [("user_id", .string(m.user))]
                if !r {
                    // The viewer's own entry shows their own read watermark (rule 18).
                    let own = m.user == viewer
                    fields += [("last_read", Self.time(own ? m.myReadTime : m.readTime)),
                               ("last_read_message_id", ch.id(at: own ? m.myRead : m.read)),
                               ("unread_messages", n(ch.unread(m, own: own)))]
                }
                if !d {
                    fields += [("last_delivered_at", Self.time(m.deliveredTime)), ("last_delivered_message_id", ch.id(at: m.delivered))]
                }
                return obj(fields)
            }
            return .success(
                obj([
                    ("cid", .string(cid)), ("members", .array(members)), ("hidden_member_count", n(hidden)),
                    ("next_cursor", next),
                ]))
        case "unread_counts":
            guard let user = params["user_id"]?.stringValue else { return .failure(Failure(code: "bad_request")) }
            var rows: [JSONValue] = []
            var threadTotal: Int?
            for ch in channels.sorted(by: { $0.cid < $1.cid }) {
                guard let i = ch.current(user) else { continue }
                let m = ch.members[i]
                let (unread, mentions) = ch.badge(m)
                // Thread fields only where the user takes part in a thread.
                let takesPart = ch.threads.contains { $0.participants.contains { $0.user == user } }
                let threads = ch.unreadThreads(user)
                if takesPart { threadTotal = (threadTotal ?? 0) + threads.count }
                guard unread > 0 || !threads.isEmpty else { continue }
                var row: [(String, JSONValue)] = [
                    ("cid", .string(ch.cid)), ("unread_messages", n(unread)), ("unread_mentions", n(mentions)),
                    ("muted", .bool(m.muted)), ("count_unread", .string(m.countUnread.rawValue)),
                    ("last_read", Self.time(m.myReadTime)), ("first_unread_message_id", unread > 0 ? ch.firstUnread(m).map { ch.id(at: $0) } ?? .null : .null),
                ]
                if takesPart {
                    row += [
                        ("unread_threads", n(threads.count)),
                        ("unread_thread_parent_ids", .array(threads.map { .string(ch.messages[ch.threads[$0].parent].id) })),
                    ]
                }
                rows.append(obj(row))
            }
            let t = totals(user)
            return .success(
                obj([
                    ("total_unread_count", n(t.total)), ("unread_channels", n(t.channels)),
                    ("total_unread_mentions", n(t.mentions)),
                ] + (threadTotal.map { [("unread_threads", n($0))] } ?? []) + [("channels", .array(rows))]))
        case "message_receipts":
            guard let cid = params["cid"]?.stringValue, let messageID = params["message_id"]?.stringValue,
                params["viewer"]?.stringValue != nil
            else { return .failure(Failure(code: "bad_request")) }
            var pageSize = 50
            if let size = params["page_size"] {
                guard let s = size.int64Value, (1...100).contains(s) else { return .failure(Failure(code: "bad_request")) }
                pageSize = Int(s)
            }
            if let list = params["list"] {
                guard let name = list.stringValue, ["read", "delivered", "unread", "undelivered"].contains(name) else {
                    return .failure(Failure(code: "bad_request"))
                }
                return receiptList(name, params, pageSize: pageSize, hide: hide)
            }
            // The model's own cursor, `model <move> <last_read>` of the last reader returned.
            var after: (move: Int, time: String)?
            if let cursor = params["cursor"]?.stringValue {
                let parts = cursor.split(separator: " ", maxSplits: 2)
                guard parts.count == 3, parts[0] == "model", let move = Int(parts[1]) else {
                    return .failure(Failure(code: "bad_request"))
                }
                after = (move, String(parts[2]))
            }
            guard let c = channelIndex(cid) else { return .failure(Failure(code: "not_found")) }
            let ch = channels[c]
            guard let p = ch.index(of: messageID) else { return .failure(Failure(code: "not_found")) }
            let others = ch.others(p)
            let shownRead = others.filter { !hide($0.user).0 }
            let shownDelivery = others.filter { !hide($0.user).1 }
            let hiddenCount = others.filter { hide($0.user).0 || hide($0.user).1 }.count
            let readers = shownRead.filter { $0.read >= p }.sorted(by: Self.newer)
            // After the cursor: every reader that would list after a reader with the cursor's time and move.
            let remaining = readers.filter { r in
                guard let after else { return true }
                let mark = Member(user: "", read: 0, delivered: 0, readTime: after.time, isMember: true, readMove: after.move)
                return Self.newer(mark, r)
            }
            let page = Array(remaining.prefix(pageSize))
            let next: JSONValue =
                remaining.count > pageSize
                ? .string("model \(page.last!.readMove) \(page.last!.readTime ?? "")") : .null
            return .success(
                obj([
                    ("read_count", n(readers.count)), ("delivered_count", n(shownDelivery.filter { $0.delivered >= p }.count)),
                    ("unread_member_count", n(shownRead.count - readers.count)),
                    ("undelivered_member_count", n(shownDelivery.filter { $0.delivered < p }.count)),
                    ("hidden_member_count", n(hiddenCount)),
                    ("readers", .array(page.map {
                        obj([("user_id", .string($0.user)), ("last_read", Self.time($0.readTime)),
                             ("read_at", Self.time(Self.passed($0.readCrossings, p)))])
                    })),
                    ("next_cursor", next),
                ]))
        case "thread_state":
            guard let cid = params["cid"]?.stringValue, let parentID = params["parent_id"]?.stringValue,
                params["viewer"]?.stringValue != nil
            else { return .failure(Failure(code: "bad_request")) }
            guard let c = channelIndex(cid) else { return .failure(Failure(code: "not_found")) }
            let ch = channels[c]
            guard let p = ch.index(of: parentID), let t = ch.threads.firstIndex(where: { $0.parent == p }) else {
                return .failure(Failure(code: "not_found"))
            }
            let participants = ch.threads[t].participants.filter { ch.current($0.user) != nil }.sorted { $0.user < $1.user }
            let entries: [JSONValue] = participants.map { (m: Member) -> JSONValue in
                let (r, d) = hide(m.user)
                var fields: [(String, JSONValue)] = [("user_id", .string(m.user))]
                if !r {
                    let own = m.user == params["viewer"]?.stringValue
                    fields += [("last_read", Self.time(own ? m.myReadTime : m.readTime)),
                               ("last_read_message_id", ch.threadID(t, at: own ? m.myRead : m.read)),
                               ("unread_replies", n(ch.unreadReplies(t, m, own: own)))]
                }
                if !d {
                    fields += [("last_delivered_at", Self.time(m.deliveredTime)),
                               ("last_delivered_message_id", ch.threadID(t, at: m.delivered))]
                }
                return obj(fields)
            }
            return .success(
                obj([
                    ("cid", .string(cid)), ("parent_id", .string(parentID)),
                    ("reply_count", n(ch.threads[t].replies.filter { !ch.messages[$0].deleted }.count)),
                    ("participants", .array(entries)),
                    ("hidden_member_count", n(participants.filter { hide($0.user).0 || hide($0.user).1 }.count)),
                ]))
        default:
            return .failure(Failure(code: "bad_request"))
        }
    }

    /// `message_receipts` with a `list`: the same counts, then `members`, the
    /// visible members of the list sorted by user id, after the cursor
    /// (`u:<user_id>`), a page at a time, each with the time their watermark
    /// passed the message (rule 13) for `read` and `delivered`.
    func receiptList(_ name: String, _ params: JSONValue, pageSize: Int, hide: (String) -> (Bool, Bool))
        -> Result<JSONValue, Failure>
    {
        func n(_ v: Int) -> JSONValue { .number(String(v)) }
        func obj(_ m: [(String, JSONValue)]) -> JSONValue { .object(m.map { (key: $0.0, value: $0.1) }) }
        var after: String?
        if let cursor = params["cursor"], cursor != .null {
            guard let text = cursor.stringValue, text.hasPrefix("u:"), text.count > 2 else {
                return .failure(Failure(code: "bad_request"))
            }
            after = String(text.dropFirst(2))
        }
        guard let cid = params["cid"]?.stringValue, let messageID = params["message_id"]?.stringValue,
            let c = channelIndex(cid)
        else { return .failure(Failure(code: "not_found")) }
        let ch = channels[c]
        guard let p = ch.index(of: messageID) else { return .failure(Failure(code: "not_found")) }
        let others = ch.others(p)
        let shownRead = others.filter { !hide($0.user).0 }
        let shownDelivery = others.filter { !hide($0.user).1 }
        let chosen: [Member]
        switch name {
        case "read": chosen = shownRead.filter { $0.read >= p }
        case "unread": chosen = shownRead.filter { $0.read < p }
        case "delivered": chosen = shownDelivery.filter { $0.delivered >= p }
        default: chosen = shownDelivery.filter { $0.delivered < p }
        }
        let remaining = chosen.sorted { $0.user < $1.user }.filter { m in after.map { m.user > $0 } ?? true }
        let page = Array(remaining.prefix(pageSize))
        let next: JSONValue = remaining.count > pageSize ? .string("u:" + page[page.count - 1].user) : .null
        let entries: [JSONValue] = page.map { m in
            switch name {
            case "read": obj([("user_id", .string(m.user)), ("read_at", Self.time(Self.passed(m.readCrossings, p)))])
            case "delivered":
                obj([("user_id", .string(m.user)), ("delivered_at", Self.time(Self.passed(m.deliveredCrossings, p)))])
            default: obj([("user_id", .string(m.user))])
            }
        }
        let readers = shownRead.filter { $0.read >= p }.count
        let delivered = shownDelivery.filter { $0.delivered >= p }.count
        return .success(
            obj([
                ("read_count", n(readers)), ("delivered_count", n(delivered)),
                ("unread_member_count", n(shownRead.count - readers)),
                ("undelivered_member_count", n(shownDelivery.count - delivered)),
                ("hidden_member_count", n(others.filter { hide($0.user).0 || hide($0.user).1 }.count)),
                ("members", .array(entries)), ("next_cursor", next),
            ]))
    }
}
