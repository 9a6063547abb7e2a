import EventBusCore
import Testing

@testable import ReceiptReducer

/// Mentions (docs/events.md "Mentions"): `unread_mentions` per channel and in
/// total, cleared as the read watermark passes the message, back after a mark
/// unread before it; only messages that count as unread count as mentions.
@Suite struct MentionTests {
    let cid = "messaging:team"

    func channel() -> Script {
        var s = Script()
        s.create(cid, ["ann", "bob", "cat"])
        return s
    }

    @discardableResult
    func mention(_ s: inout Script, _ id: String, from user: String, _ mentioned: [String], kind: NewMessage.Kind = .regular,
                 silent: Bool = false, in cid: String? = nil) -> [ReducerOutput] {
        s.send(.messageNew(cid: cid ?? self.cid, message: NewMessage(
            id: id, userID: user, createdAt: s.nextTime, kind: kind, silent: silent, mentionedUsers: mentioned)))
    }

    @Test func aMentionCountsUntilReadPassesIt() {
        var s = channel()
        s.message(cid, "m1", from: "ann")
        mention(&s, "m2", from: "ann", ["bob"])
        s.message(cid, "m3", from: "ann")
        #expect(s.reducer.unreadMentions(cid: cid, userID: "bob") == 1)
        #expect(s.reducer.unreadMentions(cid: cid, userID: "cat") == 0)
        s.read(cid, "bob", "m1")
        #expect(s.reducer.unreadMentions(cid: cid, userID: "bob") == 1)
        let outputs = s.read(cid, "bob", "m2")
        #expect(s.reducer.unreadMentions(cid: cid, userID: "bob") == 0)
        #expect(outputs[1].json["unread_mentions"] == num(0))
        #expect(outputs[1].json["total_unread_mentions"] == num(0))
    }

    @Test func markUnreadBeforeAMentionBringsItBack() {
        var s = channel()
        mention(&s, "m1", from: "ann", ["bob", "cat"])
        s.markRead(cid, "bob")
        #expect(s.reducer.unreadMentions(cid: cid, userID: "bob") == 0)
        let outputs = s.markUnread(cid, "bob", "m1")
        #expect(outputs.map(\.type) == ["notification.mark_unread"])
        #expect(outputs[0].json["unread_mentions"] == num(1))
        #expect(outputs[0].json["total_unread_mentions"] == num(1))
    }

    @Test func onlyCountableMessagesOfOthersMention() {
        var s = channel()
        mention(&s, "sys", from: "ann", ["bob"], kind: .system)
        mention(&s, "quiet", from: "ann", ["bob"], silent: true)
        mention(&s, "self", from: "bob", ["bob"])
        mention(&s, "twice", from: "ann", ["bob", "bob", "zed"])
        #expect(s.reducer.unreadMentions(cid: cid, userID: "bob") == 1)
        s.send(.messageDeleted(cid: cid, messageID: "twice"))
        #expect(s.reducer.unreadMentions(cid: cid, userID: "bob") == 0)
    }

    @Test func totalsAndUnreadCountsShowMentions() throws {
        var s = channel()
        s.create("messaging:other", ["ann", "bob"])
        mention(&s, "m1", from: "ann", ["bob"])
        mention(&s, "o1", from: "ann", ["bob"], in: "messaging:other")
        s.message("messaging:other", "o2", from: "ann")
        #expect(s.reducer.totalUnreadMentions(userID: "bob") == 2)
        let reply = try s.query("unread_counts", [("user_id", .string("bob"))])
        #expect(reply["total_unread_count"] == num(3))
        #expect(reply["total_unread_mentions"] == num(2))
        guard case .array(let rows)? = reply["channels"] else { Issue.record("no channels"); return }
        #expect(rows.map { $0["unread_mentions"] } == [num(1), num(1)])
    }

    @Test func aMemberJoiningLaterHasNoOldMentions() {
        var s = channel()
        mention(&s, "m1", from: "ann", ["dan"])
        s.send(.memberAdded(cid: cid, userID: "dan"))
        #expect(s.reducer.unreadMentions(cid: cid, userID: "dan") == 0)
        mention(&s, "m2", from: "ann", ["dan"])
        #expect(s.reducer.unreadMentions(cid: cid, userID: "dan") == 1)
    }

    @Test func mentionsSurviveASnapshot() throws {
        var s = channel()
        mention(&s, "m1", from: "ann", ["bob", "cat"])
        mention(&s, "m2", from: "cat", ["bob"])
        s.send(.messageDeleted(cid: cid, messageID: "m2"))
        let bytes = s.reducer.encodeSnapshot()
        #expect(bytes[3] >= 4)  // version 4 brought the mentions
        let restored = try ReceiptReducer(snapshot: bytes)
        #expect(restored.encodeSnapshot() == bytes)
        #expect(restored.unreadMentions(cid: cid, userID: "bob") == 1)  // m1; m2 is deleted
        #expect(restored.unreadMentions(cid: cid, userID: "cat") == 1)  // sending m2 is not reading m1
        var again = restored
        _ = again.apply(ReducerInput(
            seq: 98, time: s.nextTime, payload: .notificationMarkRead(cid: cid, userID: "cat", readAt: nil)))
        #expect(again.unreadMentions(cid: cid, userID: "cat") == 0)
        _ = again.apply(ReducerInput(
            seq: 99, time: s.nextTime, payload: .notificationMarkUnread(cid: cid, userID: "cat", messageID: "m1")))
        #expect(again.unreadMentions(cid: cid, userID: "cat") == 1)
    }

    @Test func aVersion3SnapshotLoadsWithoutMentions() throws {
        var records = SnapshotVersionTests.records
        for i in records.indices { records[i].stamp = UInt64(i) }
        let old = SnapshotVersionTests.snapshot(version: 3, records)
        let reducer = try ReceiptReducer(snapshot: old)
        #expect(reducer.unreadMentions(cid: SnapshotVersionTests.cid, userID: "bob") == 0)
        #expect(reducer.totalUnreadMentions(userID: "bob") == 0)
    }
}
