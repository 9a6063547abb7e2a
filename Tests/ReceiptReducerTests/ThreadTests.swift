import EventBusCore
import Testing

@testable import ReceiptReducer

/// Threads (docs/events.md rules 14–17): replies count in the channel only
/// when shown there; each participant has thread watermarks apart from the
/// channel's; acks naming a reply move only those; `unread_counts`,
/// `message_receipts` and `thread_state` report them.
@Suite struct ThreadTests {
    let cid = "messaging:team"

    /// ann, bob, cat and dan; ann posts m1, the thread's parent.
    func channel() -> Script {
        var s = Script()
        s.create(cid, ["ann", "bob", "cat", "dan"])
        s.message(cid, "m1", from: "ann")
        return s
    }

    @discardableResult
    func reply(_ s: inout Script, _ id: String, to parent: String = "m1", from user: String, shown: Bool = false,
               mentioning: [String] = []) -> [ReducerOutput] {
        s.send(.messageNew(cid: cid, message: NewMessage(
            id: id, userID: user, createdAt: s.nextTime, mentionedUsers: mentioning, parentID: parent, showInChannel: shown)))
    }

    func threadState(_ s: Script, _ parent: String = "m1", viewer: String = "ann") throws -> [String: JSONValue] {
        let reply = try s.query("thread_state", [("cid", .string(cid)), ("parent_id", .string(parent)), ("viewer", .string(viewer))])
        guard case .array(let participants)? = reply["participants"] else { return [:] }
        var result: [String: JSONValue] = [:]
        for p in participants { result[p["user_id"]?.stringValue ?? "?"] = p }
        return result
    }

    func unreadReplies(_ s: Script, _ user: String, _ parent: String = "m1") throws -> Int64? {
        try threadState(s, parent)[user]?["unread_replies"]?.int64Value
    }

    @Test func aReplyCountsInTheChannelOnlyWhenShownThere() throws {
        var s = channel()
        reply(&s, "r1", from: "bob")
        #expect(s.unread(cid, "cat") == 1)  // m1 only
        #expect(s.unread(cid, "ann") == 0)
        reply(&s, "r2", from: "bob", shown: true)
        #expect(s.unread(cid, "cat") == 2)  // m1 and r2, shown in the channel
        // mark read goes to the channel's latest message, r2; r1 never was in the channel.
        let outputs = s.markRead(cid, "cat")
        #expect(outputs.first?.json["last_read_message_id"] == .string("r2"))
        s.markRead(cid, "bob")
        reply(&s, "r3", from: "bob")
        #expect(s.reducer.readWatermark(cid: cid, userID: "bob") == .some("r2"))  // a hidden reply moves no channel watermark
        let latest = s.markRead(cid, "dan")
        #expect(latest.first?.json["last_read_message_id"] == .string("r2"))
    }

    @Test func participantsAreTheAuthorTheRepliersAndTheMentioned() throws {
        var s = channel()
        reply(&s, "r1", from: "bob", mentioning: ["cat", "zed"])
        let state = try threadState(s)
        #expect(state.keys.sorted() == ["ann", "bob", "cat"])  // not dan; zed is no member
        #expect(state["ann"]?["unread_replies"] == num(1))
        #expect(state["ann"]?["last_read_message_id"] == .null)  // the author has read no reply
        // Sending is not reading: a replier joins just before their reply, which is never unread to them.
        #expect(state["bob"]?["last_read_message_id"] == .null)
        #expect(state["bob"]?["unread_replies"] == num(0))
        #expect(state["cat"]?["unread_replies"] == num(1))  // mentioned in r1: r1 is unread
        reply(&s, "r2", from: "dan")
        #expect(try threadState(s)["dan"]?["last_read_message_id"] == .string("r1"))
        #expect(try unreadReplies(s, "dan") == 0)
        reply(&s, "r3", from: "bob", mentioning: ["ann"])  // ann already takes part: she keeps her watermark
        #expect(try unreadReplies(s, "ann") == 3)
    }

    @Test func readingAThreadNeverReadsTheChannelAndTheChannelNeverReadsAThread() throws {
        var s = channel()
        reply(&s, "r1", from: "bob")
        s.message(cid, "m2", from: "bob")
        reply(&s, "r2", from: "bob")
        // ann reads the thread: her channel watermark stays at m1.
        let outputs = s.read(cid, "ann", "r2")
        #expect(outputs.map(\.type) == ["message.read", "notification.mark_read"])
        #expect(outputs[0].json["parent_id"] == .string("m1") && outputs[0].json["last_read_message_id"] == .string("r2"))
        #expect(outputs[1].json["unread_replies"] == num(0) && outputs[1].json["unread_threads"] == num(0))
        #expect(s.unread(cid, "ann") == 1)  // m2
        #expect(s.reducer.readWatermark(cid: cid, userID: "ann") == .some(nil))  // ann sent m1 and has read nothing
        // bob replies again; ann reads the channel: the thread stays unread.
        reply(&s, "r3", from: "bob")
        s.markRead(cid, "ann")
        #expect(s.unread(cid, "ann") == 0)
        #expect(try unreadReplies(s, "ann") == 1)
        // A delivery ack of a reply moves the thread's delivered watermark only.
        let delivered = s.delivered(cid, "ann", "r3")
        #expect(delivered.first?.json["parent_id"] == .string("m1"))
        #expect(try threadState(s)["ann"]?["last_delivered_message_id"] == .string("r3"))
    }

    @Test func aMemberWhoDoesNotTakePartMovesNothing() throws {
        var s = channel()
        reply(&s, "r1", from: "bob")
        #expect(s.read(cid, "dan", "r1").isEmpty)
        #expect(s.delivered(cid, "dan", "r1").isEmpty)
        #expect(try threadState(s)["dan"] == nil)
        #expect(s.reducer.readWatermark(cid: cid, userID: "dan") == .some(nil))
    }

    @Test func markUnreadOfAReplyGoesBackInTheThreadOnly() throws {
        var s = channel()
        reply(&s, "r1", from: "bob")
        reply(&s, "r2", from: "bob")
        s.read(cid, "ann", "r2")
        let outputs = s.markUnread(cid, "ann", "r2")
        #expect(outputs.map(\.type) == ["notification.mark_unread"])
        #expect(outputs[0].json["first_unread_message_id"] == .string("r2"))
        #expect(outputs[0].json["last_read_message_id"] == .string("r1"))
        #expect(outputs[0].json["unread_replies"] == num(1))
        #expect(s.markUnread(cid, "ann", "r1").first?.json["last_read_message_id"] == .null)
        #expect(try unreadReplies(s, "ann") == 2)
        #expect(s.markUnread(cid, "bob", "r1").first?.json["reason"] == .string("own_message"))
    }

    @Test func aReplyToAReplyIsInTheRootsThreadAndAnUnknownParentIsRejected() throws {
        var s = channel()
        reply(&s, "r1", from: "bob")
        reply(&s, "r2", to: "r1", from: "cat")
        #expect(try threadState(s)["cat"] != nil)
        #expect(try s.query("thread_state", [("cid", .string(cid)), ("parent_id", .string("m1")), ("viewer", .string("ann"))])["reply_count"] == num(2))
        #expect(s.queryError("thread_state", .object([(key: "cid", value: .string(cid)), (key: "parent_id", value: .string("r1")),
                                                       (key: "viewer", value: .string("ann"))]))?.code == "not_found")
        let rejected = reply(&s, "r3", to: "m-nope", from: "bob")
        #expect(rejected.first?.json["reason"] == .string("unknown_message"))
        #expect(rejected.first?.json["message_id"] == .string("m-nope"))
        #expect(s.reducer.messageCount(of: cid) == 3)
    }

    @Test func unreadCountsListTheThreadsWithUnreadReplies() throws {
        var s = channel()
        s.message(cid, "m2", from: "cat")
        reply(&s, "r1", from: "bob")  // in m1's thread: ann (author), bob
        reply(&s, "r2", to: "m2", from: "bob", mentioning: ["ann"])  // m2's thread: cat, ann, bob
        let ann = try s.query("unread_counts", [("user_id", .string("ann"))])
        #expect(ann["unread_threads"] == num(2))
        guard case .array(let rows)? = ann["channels"] else { Issue.record("no channels"); return }
        #expect(rows.first?["unread_threads"] == num(2))
        #expect(rows.first?["unread_thread_parent_ids"] == .array([.string("m1"), .string("m2")]))
        s.read(cid, "ann", "r1")
        #expect(try s.query("unread_counts", [("user_id", .string("ann"))])["unread_threads"] == num(1))
        // dan takes part in no thread: his reply has no thread fields.
        let dan = try s.query("unread_counts", [("user_id", .string("dan"))])
        #expect(dan["unread_threads"] == nil)
        // cat read m2 by sending it; her only unread is m1 and m2's thread: a row listing both.
        let cat = try s.query("unread_counts", [("user_id", .string("cat"))])
        #expect(cat["unread_threads"] == num(1))
        // A member with nothing unread in the channel but a thread: first_unread_message_id is null.
        s.markRead(cid, "ann")
        let after = try s.query("unread_counts", [("user_id", .string("ann"))])
        guard case .array(let left)? = after["channels"] else { Issue.record("no channels"); return }
        #expect(left.first?["unread_messages"] == num(0) && left.first?["first_unread_message_id"] == .null)
        #expect(left.first?["unread_thread_parent_ids"] == .array([.string("m2")]))
    }

    @Test func messageReceiptsOfAReplyCountTheThreadsParticipants() throws {
        var s = channel()
        reply(&s, "r1", from: "bob", mentioning: ["cat"])  // ann, cat, bob take part; dan does not
        s.read(cid, "cat", "r1")
        let receipts = try s.query("message_receipts", [("cid", .string(cid)), ("message_id", .string("r1")), ("viewer", .string("bob"))])
        #expect(receipts["read_count"] == num(1) && receipts["unread_member_count"] == num(1))  // cat; ann
        #expect(receipts["delivered_count"] == num(1) && receipts["undelivered_member_count"] == num(1))
        let unread = try s.query("message_receipts", [("cid", .string(cid)), ("message_id", .string("r1")), ("viewer", .string("bob")),
                                                      ("list", .string("unread"))])
        #expect(unread["members"] == .array([.object([(key: "user_id", value: .string("ann"))])]))
        // Leaving the channel takes a participant out of the counts.
        s.send(.memberRemoved(cid: cid, userID: "ann"))
        let after = try s.query("message_receipts", [("cid", .string(cid)), ("message_id", .string("r1")), ("viewer", .string("bob"))])
        #expect(after["unread_member_count"] == num(0))
    }

    @Test func aThreadOnlyMentionIsNotAChannelMention() {
        var s = channel()
        reply(&s, "r1", from: "bob", mentioning: ["dan"])
        #expect(s.reducer.unreadMentions(cid: cid, userID: "dan") == 0)
        reply(&s, "r2", from: "bob", shown: true, mentioning: ["dan"])
        #expect(s.reducer.unreadMentions(cid: cid, userID: "dan") == 1)
    }

    @Test func threadsSurviveASnapshot() throws {
        var s = channel()
        reply(&s, "r1", from: "bob", mentioning: ["cat"])
        reply(&s, "r2", from: "cat", shown: true)
        s.read(cid, "ann", "r1")
        s.markUnread(cid, "ann", "r1")
        let bytes = s.reducer.encodeSnapshot()
        var restored = try ReceiptReducer(snapshot: bytes)
        #expect(restored.encodeSnapshot() == bytes)
        for user in ["ann", "bob", "cat", "dan"] {
            #expect(try s.query("unread_counts", [("user_id", .string(user))])
                    == JSONParser.parse(restored.query(method: "unread_counts", params: .object([(key: "user_id", value: .string(user))]))))
        }
        let next = ReducerInput(seq: 99, time: s.nextTime, payload: .messageRead(cid: cid, userID: "ann", messageID: "r2", readAt: nil))
        #expect(restored.apply(next) == s.reducer.apply(next))
    }
}
