import EventBusCore
import ReceiptReducer
import Testing

/// One test per receipt rule of docs/events.md.
@Suite struct ReceiptSemanticsTests {
    let cid = "messaging:general"

    /// ann, bob and cat in `cid`; ann sent m1…m`count`.
    func channel(messages count: Int = 3) -> Script {
        var script = Script()
        script.create(cid, ["ann", "bob", "cat"])
        for i in 1...count { script.message(cid, "m\(i)", from: "ann") }
        return script
    }

    // Rule 1

    @Test func watermarksOnlyMoveForward() {
        var s = channel()
        #expect(s.read(cid, "bob", "m3").map(\.type) == ["message.read", "notification.mark_read"])
        #expect(s.read(cid, "bob", "m1").isEmpty)
        #expect(s.delivered(cid, "bob", "m2").isEmpty)
        #expect(s.reducer.readWatermark(cid: cid, userID: "bob") == .some("m3"))
        #expect(s.reducer.deliveredWatermark(cid: cid, userID: "bob") == .some("m3"))
    }

    @Test func ackForOlderMessageEmitsNothing() {
        var s = channel()
        s.delivered(cid, "bob", "m2")
        s.read(cid, "bob", "m2")
        #expect(s.delivered(cid, "bob", "m2").isEmpty)  // equal
        #expect(s.delivered(cid, "bob", "m1").isEmpty)  // older
        #expect(s.read(cid, "bob", "m2").isEmpty)
        #expect(s.read(cid, "bob", "m1").isEmpty)
        #expect(s.reducer.rejectedCount(.unknownMessage) == 0)
    }

    @Test func markUnreadMovesOnlyTheOwnReadWatermarkBack() throws {
        var s = channel(messages: 5)
        s.read(cid, "bob", "m5")
        let out = s.markUnread(cid, "bob", "m3")
        #expect(out.map(\.type) == ["notification.mark_unread"])
        #expect(out[0].subject == "@bob")
        #expect(s.reducer.ownReadWatermark(cid: cid, userID: "bob") == .some("m2"))
        #expect(s.reducer.readWatermark(cid: cid, userID: "bob") == .some("m5"))
        #expect(s.reducer.deliveredWatermark(cid: cid, userID: "bob") == .some("m5"))
        #expect(s.unread(cid, "bob") == 3)
    }

    @Test func markUnreadFromLaterThanReadChangesNothing() {
        var s = channel(messages: 5)
        s.read(cid, "bob", "m2")
        #expect(s.markUnread(cid, "bob", "m4").isEmpty)  // read would move to m3: later than m2
        #expect(s.markUnread(cid, "bob", "m3").isEmpty)  // read would stay at m2
        #expect(s.reducer.ownReadWatermark(cid: cid, userID: "bob") == .some("m2"))
    }

    @Test func markUnreadFromFirstMessageLeavesNoReadMessage() throws {
        var s = channel()
        s.markRead(cid, "bob")
        let out = s.markUnread(cid, "bob", "m1")
        #expect(out[0].json["last_read_message_id"] == .null)
        #expect(out[0].json["first_unread_message_id"] == .string("m1"))
        #expect(out[0].json["unread_messages"] == num(3))
    }

    // Rule 2

    @Test func readImpliesDelivered() throws {
        var s = channel()
        s.delivered(cid, "bob", "m1")
        let out = s.read(cid, "bob", "m3", at: "2026-11-22T05:00:00.000Z")
        #expect(!out.contains { $0.type == "message.delivered" })
        #expect(s.reducer.deliveredWatermark(cid: cid, userID: "bob") == .some("m3"))
        let state = try s.query("channel_state", [("cid", .string(cid)), ("viewer", .string("bob"))])
        guard case .array(let members) = state["members"] else { Issue.record("no members"); return }
        let bob = members.first { $0["user_id"] == .string("bob") }
        #expect(bob?["last_delivered_at"] == .string("2026-11-22T05:00:00.000Z"))
    }

    @Test func deliveredAckForAlreadyReadMessageEmitsNothing() {
        var s = channel()
        s.read(cid, "bob", "m3")
        #expect(s.delivered(cid, "bob", "m3").isEmpty)
        #expect(s.delivered(cid, "bob", "m2").isEmpty)
    }

    // Rule 3

    @Test func sendingIsNotReading() {
        var s = channel()
        s.read(cid, "bob", "m1")
        let out = s.message(cid, "b1", from: "bob")
        #expect(out.map(\.type) == ["message.new"])
        #expect(s.reducer.readWatermark(cid: cid, userID: "bob") == .some("m1"))
        #expect(s.reducer.deliveredWatermark(cid: cid, userID: "bob") == .some("m1"))
        #expect(s.unread(cid, "bob") == 2)  // m2 and m3, never his own b1
        // His client says so when it has shown the channel: then everything is read.
        #expect(s.read(cid, "bob", "b1").map(\.type) == ["message.read", "notification.mark_read"])
        #expect(s.unread(cid, "bob") == 0)
    }

    @Test func aSystemMessageInAUsersNameMovesNothing() {
        var s = channel()
        s.message(cid, "s1", from: "bob", kind: .system)
        #expect(s.reducer.readWatermark(cid: cid, userID: "bob") == .some(nil))
        #expect(s.unread(cid, "bob") == 3)
    }

    @Test func ownMessagesNeverCountAsUnread() {
        var s = channel()
        s.message(cid, "b1", from: "bob")
        s.message(cid, "a4", from: "ann")
        s.message(cid, "b2", from: "bob")
        s.markUnread(cid, "bob", "m1")  // read moves before everything
        #expect(s.unread(cid, "bob") == 4)  // m1 m2 m3 a4, not b1 b2
        #expect(s.markUnread(cid, "bob", "b1").map(\.type) == ["receipt.rejected"])
    }

    // Rule 4

    @Test func systemAndSilentMessagesNeverCountAsUnread() {
        var s = channel(messages: 1)
        s.message(cid, "sys", from: "ann", kind: .system)
        s.message(cid, "quiet", from: "ann", silent: true)
        s.message(cid, "both", from: "ann", kind: .system, silent: true)
        #expect(s.unread(cid, "bob") == 1)
        #expect(s.reducer.unreadTotals(userID: "bob") == (1, 1))
    }

    @Test func unreadTotalsSpanAllTheUsersChannels() throws {
        var s = channel(messages: 2)
        s.create("messaging:other", ["bob", "dan"])
        s.message("messaging:other", "o1", from: "dan")
        s.create("messaging:quiet", ["bob", "dan"])
        let out = s.read(cid, "bob", "m1")
        #expect(out[1].json["unread_messages"] == num(1))
        #expect(out[1].json["unread_channels"] == num(2))
        #expect(out[1].json["total_unread_count"] == num(2))
        let counts = try s.query("unread_counts", [("user_id", .string("bob"))])
        #expect(counts["total_unread_count"] == num(2))
        #expect(counts["unread_channels"] == num(2))
        guard case .array(let rows) = counts["channels"] else { Issue.record("no channels"); return }
        #expect(rows.map { $0["cid"] } == [.string(cid), .string("messaging:other")])
        #expect(rows[0]["first_unread_message_id"] == .string("m2"))
        #expect(rows[1]["first_unread_message_id"] == .string("o1"))
        #expect(rows[1]["last_read"] == .null)
    }

    @Test func firstUnreadSkipsTheUsersOwnRun() throws {
        var s = channel(messages: 1)
        for i in 1...5 { s.message(cid, "b\(i)", from: "bob") }
        s.message(cid, "sys", from: "ann", kind: .system)
        s.message(cid, "a2", from: "ann")
        s.markUnread(cid, "bob", "m1")
        let counts = try s.query("unread_counts", [("user_id", .string("bob"))])
        guard case .array(let rows) = counts["channels"] else { Issue.record("no channels"); return }
        #expect(rows.first?["first_unread_message_id"] == .string("m1"))
        s.read(cid, "bob", "m1")
        let after = try s.query("unread_counts", [("user_id", .string("bob"))])
        guard case .array(let rows2) = after["channels"] else { Issue.record("no channels"); return }
        #expect(rows2.first?["first_unread_message_id"] == .string("a2"))
        #expect(rows2.first?["unread_messages"] == num(1))
    }

    @Test func deletedMessageStopsCountingAtOnce() throws {
        var s = channel()
        #expect(s.unread(cid, "bob") == 3)
        let out = s.send(.messageDeleted(cid: cid, messageID: "m2"))
        // The channel hears of it, and each member it was unread for gets their new counts (rule 21).
        #expect(out.map(\.type).first == "message.deleted")
        #expect(out[0].subject == cid)
        #expect(out.dropFirst().allSatisfy { $0.type == "notification.message_deleted" })
        #expect(out.dropFirst().contains { $0.subject == "@bob" && $0.json["unread_messages"] == num(2) })
        #expect(s.unread(cid, "bob") == 2)
        #expect(s.send(.messageDeleted(cid: cid, messageID: "m2")).isEmpty)  // deleting twice changes nothing
        #expect(s.unread(cid, "bob") == 2)
    }

    // Rule 5

    static let rejections: [(RejectionReason, String)] = [
        (.unknownChannel, "messaging:nowhere"), (.notMember, "zed"), (.banned, "banned"), (.unknownMessage, "m404"),
        (.ownMessage, "own"),
    ]

    @Test(arguments: RejectionReason.allCases)
    func rejectedAckAppearsOnDiagWithReason(reason: RejectionReason) throws {
        var s = channel()
        s.message(cid, "b1", from: "bob")
        s.create("messaging:mine", ["zed"])
        let out: [ReducerOutput]
        let channelID: String
        switch reason {
        case .unknownChannel:
            channelID = "messaging:nowhere"
            out = s.markUnread(channelID, "bob", "m1")
        case .notMember:
            channelID = cid
            out = s.markUnread(cid, "zed", "m1")
        case .banned:
            channelID = cid
            _ = s.send(.userBanned(userID: "bob", cid: cid))
            out = s.markUnread(cid, "bob", "m404")
        case .unknownMessage:
            channelID = cid
            out = s.markUnread(cid, "bob", "m404")
        case .ownMessage:
            channelID = cid
            out = s.markUnread(cid, "bob", "b1")
        }
        #expect(out.count == 1)
        #expect(out[0].stage == "diag")
        #expect(out[0].type == "receipt.rejected")
        #expect(out[0].subject == channelID)
        #expect(out[0].keys == ["seq", "type", "cid", "user_id", "message_id", "reason"])
        #expect(out[0].json["seq"] == .number(String(s.seq)))
        #expect(out[0].json["type"] == .string("notification.mark_unread"))
        #expect(out[0].json["reason"] == .string(reason.rawValue))
        #expect(s.reducer.rejectedCount(reason) == 1)
    }

    @Test func rejectionPrecedenceIsChannelThenMemberThenMessage() {
        var s = channel()
        #expect(s.read("messaging:nowhere", "zed", "m404")[0].json["reason"] == .string("unknown_channel"))
        #expect(s.read(cid, "zed", "m404")[0].json["reason"] == .string("not_member"))
        #expect(s.read(cid, "bob", "m404")[0].json["reason"] == .string("unknown_message"))
        #expect(s.markUnread(cid, "ann", "m404")[0].json["reason"] == .string("unknown_message"))
    }

    @Test func rejectedAcksChangeNothing() throws {
        var s = channel()
        let params: [(String, JSONValue)] = [("cid", .string(cid)), ("viewer", .string("ann"))]
        let before = try s.query("channel_state", params)
        s.read(cid, "zed", "m1")
        s.delivered(cid, "bob", "m404")
        s.markRead("messaging:nowhere", "bob")
        #expect(try s.query("channel_state", params) == before)
        #expect(s.reducer.rejectedCount(.notMember) == 1)
        #expect(s.reducer.rejectedCount(.unknownMessage) == 1)
        #expect(s.reducer.rejectedCount(.unknownChannel) == 1)
        #expect(s.reducer.userCount == 3)  // zed was not interned
    }

    @Test func messageNewForUnknownChannelIsRejected() {
        var s = Script()
        let out = s.message("messaging:nowhere", "m1", from: "ann")
        #expect(out.map(\.stage) == ["diag"])
        #expect(out[0].keys == ["seq", "type", "cid", "user_id", "message_id", "reason"])
        #expect(out[0].json["type"] == .string("message.new"))
        #expect(out[0].json["reason"] == .string("unknown_channel"))
    }

    @Test func deletingAnUnknownMessageIsRejected() {
        var s = channel()
        let out = s.send(.messageDeleted(cid: cid, messageID: "m404"))
        #expect(out[0].keys == ["seq", "type", "cid", "message_id", "reason"])
        #expect(out[0].json["reason"] == .string("unknown_message"))
    }

    // Rule 6

    @Test func markUnreadWorksBeyondTheLast100Messages() {
        var s = channel(messages: 500)
        s.markRead(cid, "bob")
        let out = s.markUnread(cid, "bob", "m7")
        #expect(out.map(\.type) == ["notification.mark_unread"])
        #expect(out[0].json["unread_messages"] == num(494))
        #expect(s.reducer.ownReadWatermark(cid: cid, userID: "bob") == .some("m6"))
        #expect(s.reducer.readWatermark(cid: cid, userID: "bob") == .some("m500"))
    }

    @Test func markReadOnFullyReadChannelChangesNothing() {
        var s = channel()
        #expect(s.markRead(cid, "bob").map(\.type) == ["message.read", "notification.mark_read"])
        #expect(s.markRead(cid, "bob").isEmpty)
        // Sending is not reading: the sender has read nothing until she says so, and then has nothing unread.
        #expect(s.markRead(cid, "ann").map(\.type) == ["message.read", "notification.mark_read"])
        #expect(s.markRead(cid, "ann").isEmpty)
    }

    @Test func markReadOnEmptyChannelChangesNothing() {
        var s = Script()
        s.create(cid, ["bob"])
        #expect(s.markRead(cid, "bob").isEmpty)
    }

    // Rule 7 is GroupReceiptTests.

    // Rule 8

    @Test func removedMemberStopsCountingAndKeepsWatermarksWhenReadded() throws {
        var s = channel()
        s.read(cid, "bob", "m2")
        s.send(.memberRemoved(cid: cid, userID: "bob"))
        var receipts = try s.query(
            "message_receipts", [("cid", .string(cid)), ("message_id", .string("m1")), ("viewer", .string("ann"))])
        #expect(receipts["read_count"] == num(0))
        #expect(receipts["unread_member_count"] == num(1))  // cat
        #expect(s.read(cid, "bob", "m3")[0].json["reason"] == .string("not_member"))
        #expect(s.reducer.unreadTotals(userID: "bob") == (0, 0))
        s.message(cid, "m4", from: "ann")
        s.send(.memberAdded(cid: cid, userID: "bob"))
        #expect(s.reducer.readWatermark(cid: cid, userID: "bob") == .some("m2"))
        #expect(s.unread(cid, "bob") == 2)
        receipts = try s.query(
            "message_receipts", [("cid", .string(cid)), ("message_id", .string("m1")), ("viewer", .string("ann"))])
        #expect(receipts["read_count"] == num(1))
    }

    @Test func memberAddedLaterStartsAtLatestMessage() throws {
        var s = channel()
        let joinTime = s.nextTime
        s.send(.memberAdded(cid: cid, userID: "dan"))
        #expect(s.reducer.readWatermark(cid: cid, userID: "dan") == .some("m3"))
        #expect(s.reducer.deliveredWatermark(cid: cid, userID: "dan") == .some("m3"))
        #expect(s.unread(cid, "dan") == 0)
        let state = try s.query("channel_state", [("cid", .string(cid)), ("viewer", .string("dan"))])
        guard case .array(let members) = state["members"] else { Issue.record("no members"); return }
        #expect(members.first { $0["user_id"] == .string("dan") }?["last_read"] == .string(joinTime))
        s.message(cid, "m4", from: "ann")
        #expect(s.unread(cid, "dan") == 1)
    }

    // Rule 9

    @Test func messageFromNonMemberCountsForMembersAndMovesNoWatermark() {
        var s = channel(messages: 1)
        s.read(cid, "bob", "m1")
        let out = s.message(cid, "bot1", from: "bot")
        #expect(out.map(\.type) == ["message.new"])
        #expect(s.unread(cid, "bob") == 1)
        #expect(s.unread(cid, "ann") == 1)
        #expect(s.reducer.readWatermark(cid: cid, userID: "bot") == nil)
        #expect(s.reducer.members(of: cid) == ["ann", "bob", "cat"])
    }

    @Test func repeatedChannelCreatedAddsMissingMembers() {
        var s = channel()
        s.read(cid, "bob", "m2")
        #expect(s.create(cid, ["bob", "dan", "dan"]).isEmpty)
        #expect(s.reducer.members(of: cid) == ["ann", "bob", "cat", "dan"])
        #expect(s.reducer.readWatermark(cid: cid, userID: "bob") == .some("m2"))  // untouched
        #expect(s.reducer.readWatermark(cid: cid, userID: "dan") == .some("m3"))  // starts at latest
        #expect(s.reducer.messageCount(of: cid) == 3)
    }

    @Test func repeatedMessageIDChangesNothing() {
        var s = channel()
        #expect(s.message(cid, "m2", from: "bob").isEmpty)
        #expect(s.reducer.messageCount(of: cid) == 3)
    }

    @Test func settingsEventsProduceNothing() {
        var s = channel()
        #expect(s.send(.userUpdated(userID: "bob", deliveryReceipts: false, readReceipts: false)).isEmpty)
        #expect(s.send(.channelTypeUpdated(name: "messaging", deliveryEvents: false, readEvents: false)).isEmpty)
    }

    /// Membership itself never reaches the channel; the member's own devices
    /// hear of their new counts (rule 21), once per change.
    @Test func membershipChangesReachOnlyTheMembersDevices() {
        var s = Script()
        #expect(s.create(cid, ["ann"]).isEmpty)
        #expect(s.send(.memberAdded(cid: cid, userID: "bob")).map { "\($0.subject) \($0.type)" }
            == ["@bob notification.added_to_channel"])
        #expect(s.send(.memberAdded(cid: cid, userID: "bob")).isEmpty)
        #expect(s.send(.memberRemoved(cid: cid, userID: "bob")).map { "\($0.subject) \($0.type)" }
            == ["@bob notification.removed_from_channel"])
        #expect(s.send(.memberRemoved(cid: cid, userID: "bob")).isEmpty)
    }
}
