import EventBus
import PrivacyFilter
import ReceiptReducer
import Testing

/// Replies for a viewer (docs/privacy.md): hidden fields, counts, readers, cursors.
@Suite struct ReplyRedactionTests {
    static let cid = "messaging:general"

    /// ann sent m1; bob, cat, dan and eve read m1, in that order, all at one
    /// time (readers list newest first: eve, dan, cat, bob); then bob turned
    /// read receipts off and cat delivery receipts. Their reads were made with
    /// receipts on, so they are public (docs/events.md rule 19); the views hide
    /// them by the settings in force now.
    static func driver(_ filters: [PrivacyFilter]) throws -> FilterDriver {
        var d = FilterDriver(filters)
        try d.send(.channelCreated(cid: cid, members: ["ann", "bob", "cat", "dan", "eve"]))
        try d.send(.messageNew(cid: cid, message: message("m1", from: "ann")))
        for user in ["bob", "cat", "dan", "eve"] { try d.send(.messageRead(cid: cid, userID: user, messageID: "m1", readAt: nil)) }
        try d.send(.userUpdated(userID: "bob", deliveryReceipts: nil, readReceipts: false))
        try d.send(.userUpdated(userID: "cat", deliveryReceipts: false, readReceipts: nil))
        return d
    }

    static let both = [PrivacyFilter(policy: .read), PrivacyFilter(policy: .delivery)]

    func member(_ state: JSONValue, _ user: String) -> JSONValue? {
        guard case .array(let members)? = state["members"] else { return nil }
        return members.first { $0["user_id"]?.stringValue == user }
    }

    @Test func channelStateHidesAMembersFieldsFromOthersButNotFromThemselves() throws {
        var d = try Self.driver(Self.both)
        let forDan = try d.query("channel_state", [("cid", .string(Self.cid)), ("viewer", .string("dan"))])
        #expect(member(forDan, "bob")?["last_read"] == nil && member(forDan, "bob")?["unread_messages"] == nil)
        #expect(member(forDan, "bob")?["last_delivered_message_id"]?.stringValue == "m1")
        #expect(member(forDan, "cat")?["last_delivered_at"] == nil && member(forDan, "cat")?["last_read_message_id"]?.stringValue == "m1")
        #expect(member(forDan, "eve")?["last_read_message_id"]?.stringValue == "m1")
        #expect(forDan["hidden_member_count"]?.int64Value == 2)
        let forBob = try d.query("channel_state", [("cid", .string(Self.cid)), ("viewer", .string("bob"))])
        #expect(member(forBob, "bob")?["last_read_message_id"]?.stringValue == "m1")
        #expect(forBob["hidden_member_count"]?.int64Value == 1)
    }

    @Test func theFilterOrderDoesNotMatter() throws {
        var ab = try Self.driver(Self.both)
        var ba = try Self.driver(Self.both.reversed())
        for viewer in ["ann", "bob", "cat", "zed"] {
            let params: [(String, JSONValue)] = [("cid", .string(Self.cid)), ("message_id", .string("m1")), ("viewer", .string(viewer))]
            #expect(try ab.query("message_receipts", params) == ba.query("message_receipts", params))
            let state: [(String, JSONValue)] = [("cid", .string(Self.cid)), ("viewer", .string(viewer))]
            #expect(try ab.query("channel_state", state) == ba.query("channel_state", state))
        }
    }

    @Test func messageReceiptsLeavesHiddenMembersOutOfCountsAndReaders() throws {
        var d = try Self.driver(Self.both)
        let r = try d.query("message_receipts", [("cid", .string(Self.cid)), ("message_id", .string("m1")), ("viewer", .string("ann"))])
        #expect(r["read_count"]?.int64Value == 3)  // cat, dan, eve (bob hidden)
        #expect(r["unread_member_count"]?.int64Value == 0)
        #expect(r["delivered_count"]?.int64Value == 3)  // bob, dan, eve (cat hidden)
        #expect(r["undelivered_member_count"]?.int64Value == 0)
        #expect(r["hidden_member_count"]?.int64Value == 2)
        guard case .array(let readers)? = r["readers"] else { Issue.record("no readers"); return }
        #expect(readers.compactMap { $0["user_id"]?.stringValue } == ["eve", "dan", "cat"])
        // Without filters nothing is hidden.
        var plain = try Self.driver([])
        let full = try plain.query("message_receipts", [("cid", .string(Self.cid)), ("message_id", .string("m1")), ("viewer", .string("ann"))])
        #expect(full["read_count"]?.int64Value == 4 && full["hidden_member_count"]?.int64Value == 0)
    }

    @Test func receiptListsNeverNameAHiddenMemberNorCountThem() throws {
        func names(_ d: inout FilterDriver, _ list: String, viewer: String = "ann", pageSize: Int = 50) throws -> [String] {
            var result: [String] = []
            var cursor: JSONValue = .null
            for _ in 0..<10 {
                var params: [(String, JSONValue)] = [("cid", .string(Self.cid)), ("message_id", .string("m1")), ("viewer", .string(viewer)),
                                                     ("list", .string(list)), ("page_size", .number(String(pageSize)))]
                if cursor != .null { params.append(("cursor", cursor)) }
                let r = try d.query("message_receipts", params)
                guard case .array(let members)? = r["members"] else { break }
                result += members.compactMap { $0["user_id"]?.stringValue }
                cursor = r["next_cursor"] ?? .null
                if cursor == .null { break }
            }
            return result
        }
        var d = try Self.driver(Self.both)
        // bob (read off) marks m1 unread: private (rule 6), it changes no list.
        try d.send(.notificationMarkUnread(cid: Self.cid, userID: "bob", messageID: "m1"))
        for pageSize in [1, 50] {
            #expect(try names(&d, "read", pageSize: pageSize) == ["cat", "dan", "eve"])
            #expect(try names(&d, "unread", pageSize: pageSize) == [])
            #expect(try names(&d, "delivered", pageSize: pageSize) == ["bob", "dan", "eve"])  // cat's delivery hidden
            #expect(try names(&d, "undelivered", pageSize: pageSize) == [])
        }
        let counts = try d.query("message_receipts", [("cid", .string(Self.cid)), ("message_id", .string("m1")), ("viewer", .string("ann")),
                                                      ("list", .string("unread"))])
        #expect(counts["unread_member_count"]?.int64Value == 0 && counts["hidden_member_count"]?.int64Value == 2)
        // Each sees their own entry.
        #expect(try names(&d, "read", viewer: "bob") == ["bob", "cat", "dan", "eve"])
        #expect(try names(&d, "delivered", viewer: "cat") == ["bob", "cat", "dan", "eve"])
        // Without filters, everyone.
        var plain = try Self.driver([])
        try plain.send(.notificationMarkUnread(cid: Self.cid, userID: "bob", messageID: "m1"))
        #expect(try names(&plain, "unread") == [])  // bob's mark unread is his own
        #expect(try names(&plain, "read") == ["bob", "cat", "dan", "eve"])
        #expect(try names(&plain, "delivered") == ["bob", "cat", "dan", "eve"])
    }

    @Test func threadRepliesAndThreadStateHideAParticipantAsTheChannelDoes() throws {
        var d = try Self.driver(Self.both)
        // m1's thread: ann (author), bob (read off) who replies, cat (delivery off) mentioned, dan replies.
        try d.send(.messageNew(cid: Self.cid, message: NewMessage(
            id: "r1", userID: "bob", createdAt: "2026-11-22T03:01:00.000Z", mentionedUsers: ["cat"], parentID: "m1")))
        try d.send(.messageNew(cid: Self.cid, message: NewMessage(
            id: "r2", userID: "dan", createdAt: "2026-11-22T03:02:00.000Z", parentID: "m1")))
        try d.send(.messageRead(cid: Self.cid, userID: "cat", messageID: "r2", readAt: nil))
        let base: [(String, JSONValue)] = [("cid", .string(Self.cid)), ("message_id", .string("r1")), ("viewer", .string("ann"))]
        let receipts = try d.query("message_receipts", base)
        // Over the participants but bob, the sender, who took part before r1: ann (the viewer,
        // no reply read) and cat; dan joined the thread after r1 and counts for it in nothing.
        #expect(receipts["read_count"]?.int64Value == 1)  // cat; bob sent it
        #expect(receipts["delivered_count"]?.int64Value == 0)  // cat's delivery hidden
        #expect(receipts["hidden_member_count"]?.int64Value == 1)
        let read = try d.query("message_receipts", base + [("list", .string("read"))])
        guard case .array(let readers)? = read["members"] else { Issue.record("no members"); return }
        #expect(readers.compactMap { $0["user_id"]?.stringValue } == ["cat"])
        let state = try d.query("thread_state", [("cid", .string(Self.cid)), ("parent_id", .string("m1")), ("viewer", .string("ann"))])
        func participant(_ user: String) -> JSONValue? {
            guard case .array(let all)? = state["participants"] else { return nil }
            return all.first { $0["user_id"]?.stringValue == user }
        }
        #expect(participant("bob")?["last_read"] == nil && participant("bob")?["last_delivered_at"] != nil)
        #expect(participant("cat")?["last_delivered_at"] == nil && participant("cat")?["last_read"] != nil)
        #expect(state["hidden_member_count"]?.int64Value == 2)
        // bob's thread read is held back from the channel like any read of his.
        let held = try d.send(.messageRead(cid: Self.cid, userID: "bob", messageID: "r2", readAt: nil))
        #expect(!held.contains { $0.topic.hasSuffix("/message.read") })
        #expect(held.contains { $0.topic.hasSuffix("/notification.mark_read") })
    }

    @Test func aCursorNeverNamesAHiddenReaderAndPagesSkipThem() throws {
        /// Pages of one reader: (reader, next cursor) for each page.
        func pages(_ d: inout FilterDriver) throws -> [(reader: String, next: JSONValue)] {
            var result: [(String, JSONValue)] = []
            var cursor: JSONValue = .null
            for _ in 0..<10 {
                var params: [(String, JSONValue)] = [("cid", .string(Self.cid)), ("message_id", .string("m1")), ("viewer", .string("ann")),
                                                     ("page_size", .number("1"))]
                if cursor != .null { params.append(("cursor", cursor)) }
                let r = try d.query("message_receipts", params)
                guard case .array(let readers)? = r["readers"], let reader = readers.first?["user_id"]?.stringValue else { break }
                cursor = r["next_cursor"] ?? .null
                result.append((reader, cursor))
                if cursor == .null { break }
            }
            return result
        }
        // Unfiltered, each page's cursor names its reader (bob included).
        var plain = try Self.driver([])
        let all = try pages(&plain)
        #expect(all.map(\.reader) == ["eve", "dan", "cat", "bob"])
        var cursorOf: [String: JSONValue] = [:]
        for page in all where page.next != .null { cursorOf[page.reader] = page.next }
        // Filtered, bob is skipped and every cursor is the one naming the visible reader just returned.
        var d = try Self.driver(Self.both)
        let seen = try pages(&d)
        #expect(seen.map(\.reader) == ["eve", "dan", "cat"])
        for page in seen where page.next != .null {
            #expect(page.next == cursorOf[page.reader], "\(page.reader)")
        }
        #expect(seen.last?.next == .null)
    }

    @Test func reciprocityHidesEveryoneElsesReadsFromAViewerWithReadReceiptsOffInOneToOneChannels() throws {
        for reciprocity in [false, true] {
            var d = FilterDriver([PrivacyFilter(policy: .read, reciprocity: reciprocity)])
            try d.send(.channelCreated(cid: "messaging:dm", members: ["ann", "bob"]))
            try d.send(.channelCreated(cid: "messaging:group", members: ["ann", "bob", "cat"]))
            for cid in ["messaging:dm", "messaging:group"] {
                try d.send(.messageNew(cid: cid, message: message("m-\(cid.dropFirst(10))", from: "ann")))
                try d.send(.messageRead(cid: cid, userID: "bob", messageID: "m-\(cid.dropFirst(10))", readAt: nil))
            }
            try d.send(.userUpdated(userID: "ann", deliveryReceipts: nil, readReceipts: false))
            let dm = try d.query("message_receipts", [("cid", .string("messaging:dm")), ("message_id", .string("m-dm")), ("viewer", .string("ann"))])
            #expect(dm["read_count"]?.int64Value == (reciprocity ? 0 : 1))
            let state = try d.query("channel_state", [("cid", .string("messaging:dm")), ("viewer", .string("ann"))])
            #expect((member(state, "bob")?["last_read"] == nil) == reciprocity)
            #expect(member(state, "ann")?["last_read"] != nil)
            // Groups are untouched.
            let group = try d.query("message_receipts", [("cid", .string("messaging:group")), ("message_id", .string("m-group")), ("viewer", .string("ann"))])
            #expect(group["read_count"]?.int64Value == 1)
        }
    }

    @Test func reciprocityWithholdsReadEventsInOneToOneChannelsFromAViewerWithReadReceiptsOff() throws {
        for reciprocity in [false, true] {
            var d = FilterDriver([PrivacyFilter(policy: .read, reciprocity: reciprocity)])
            try d.send(.channelCreated(cid: "messaging:dm", members: ["ann", "bob"]))
            try d.send(.channelCreated(cid: "messaging:group", members: ["ann", "bob", "cat"]))
            try d.send(.userUpdated(userID: "ann", deliveryReceipts: nil, readReceipts: false))
            for cid in ["messaging:dm", "messaging:group"] {
                try d.send(.messageNew(cid: cid, message: message("m-\(cid.dropFirst(10))", from: "ann")))
            }
            let dm = try d.send(.messageRead(cid: "messaging:dm", userID: "bob", messageID: "m-dm", readAt: nil))
            let group = try d.send(.messageRead(cid: "messaging:group", userID: "bob", messageID: "m-group", readAt: nil))
            let dmTypes = dm.map { String($0.topic.split(separator: "/").last ?? "") }
            // bob's own devices always hear of it; ann (receipts off) does not in the one-to-one channel.
            #expect(dmTypes.contains("notification.mark_read"))
            #expect(dmTypes.contains("message.read") == !reciprocity)
            #expect(group.map { String($0.topic.split(separator: "/").last ?? "") }.contains("message.read"))
            // A third member joining makes it a group: reads show again.
            try d.send(.memberAdded(cid: "messaging:dm", userID: "cat"))
            try d.send(.messageNew(cid: "messaging:dm", message: message("m2", from: "ann")))
            let after = try d.send(.messageRead(cid: "messaging:dm", userID: "bob", messageID: "m2", readAt: nil))
            #expect(after.map { String($0.topic.split(separator: "/").last ?? "") }.contains("message.read"))
        }
    }

    @Test func reciprocityMembershipSurvivesASnapshot() throws {
        var state = PrivacySettings()
        state.applyMembership(.channelCreated(cid: "messaging:dm", members: ["ann", "bob"]))
        state.applyMembership(.memberAdded(cid: "messaging:g", userID: "x"))  // unknown channel: nothing
        let restored = try PrivacySettings(snapshot: state.snapshot())
        #expect(restored == state)
        #expect(restored.otherMember(of: "messaging:dm", than: "ann") == "bob")
        #expect(restored.members["messaging:g"] == nil)
    }

    /// A deleted channel's members go with it (its cid may come back with
    /// others), and a deleted user is in no channel: reciprocity follows.
    @Test func reciprocityForgetsDeletedChannelsAndUsers() {
        var state = PrivacySettings()
        state.applyMembership(.channelCreated(cid: "messaging:dm", members: ["ann", "bob"]))
        state.applyMembership(.channelCreated(cid: "messaging:dm2", members: ["ann", "cat"]))
        state.applyMembership(.channelDeleted(cid: "messaging:dm"))
        #expect(state.members["messaging:dm"] == nil)
        state.applyMembership(.channelCreated(cid: "messaging:dm", members: ["ann", "bob", "dan"]))
        #expect(state.otherMember(of: "messaging:dm", than: "ann") == nil)
        state.applyMembership(.userDeleted(userID: "cat", hard: false))
        #expect(state.members["messaging:dm2"] == ["ann"])
        #expect(state.otherMember(of: "messaging:dm2", than: "ann") == nil)
    }
}
