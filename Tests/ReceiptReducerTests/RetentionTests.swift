import EventBusCore
import Testing

@testable import ReceiptReducer

/// Message retention (docs/events.md rule 25): a channel keeps its newest
/// messages, forgets older ones, and every count stays exact.
@Suite struct RetentionTests {
    let cid = "messaging:long"

    /// ann, bob and cat in a channel keeping 8 messages: ann posts `count`
    /// messages m1, m2, …; bob reads m2 first.
    func channel(messages count: Int, retain: Int = 8) -> Script {
        var s = Script()
        s.reducer.retainMessages = retain
        s.create(cid, ["ann", "bob", "cat"])
        for n in 1...count {
            s.message(cid, "m\(n)", from: "ann")
            if n == 2 { s.read(cid, "bob", "m2") }
        }
        return s
    }

    @Test func aChannelKeepsItsNewestMessagesAndForgetsInChunks() {
        // 8 kept, forgotten once 9 (8 + an eighth, at least one) are held.
        var s = channel(messages: 8)
        #expect(s.reducer.messageCount(of: cid) == 8)
        s.message(cid, "m9", from: "ann")
        #expect(s.reducer.messageCount(of: cid) == 8)
        let held = channel(messages: 1_000).reducer
        #expect(held.messageCount(of: cid) == 8)
        #expect(held.channels[0].forgotten == 992)
        // 1,000 kept: forgotten 125 at a time, so held between 1,000 and 1,124.
        var big = channel(messages: 1_124, retain: 1_000)
        #expect(big.reducer.messageCount(of: cid) == 1_124)
        big.message(cid, "m1125", from: "ann")
        #expect(big.reducer.messageCount(of: cid) == 1_000)
    }

    @Test func anAckNamingAForgottenMessageIsUnknownMessage() {
        var s = channel(messages: 20)
        #expect(s.read(cid, "cat", "m3").first?.json["reason"] == .string("unknown_message"))
        #expect(s.send(.messageDeleted(cid: cid, messageID: "m3")).first?.json["reason"] == .string("unknown_message"))
        #expect(s.markUnread(cid, "bob", "m5").first?.json["reason"] == .string("unknown_message"))
        #expect(s.queryError("message_receipts", .object([
            (key: "cid", value: .string(cid)), (key: "message_id", value: .string("m3")), (key: "viewer", value: .string("ann")),
        ]))?.code == "not_found")
        // A kept one is acked as ever.
        #expect(s.read(cid, "cat", "m15").map(\.type) == ["message.read", "notification.mark_read"])
    }

    @Test func aWatermarkOlderThanTheWindowCountsEverythingNewer() throws {
        var s = channel(messages: 20)
        // bob read m2: m3–m20 are unread, forgotten or not; cat read nothing: all 20.
        #expect(s.unread(cid, "bob") == 18)
        #expect(s.unread(cid, "cat") == 20)
        #expect(s.reducer.unreadTotals(userID: "cat").total == 20)
        // Their watermarks name no message now (m2 is forgotten); the counts others see agree.
        #expect(s.reducer.readWatermark(cid: cid, userID: "bob") == .some(nil))
        let state = try s.query("channel_state", [("cid", .string(cid)), ("viewer", .string("ann"))])
        guard case .array(let members)? = state["members"] else {
            Issue.record("no members in \(state)")
            return
        }
        #expect(members.first { $0["user_id"] == .string("bob") }?["unread_messages"] == num(18))
        // Reading a kept message counts from there; the forgotten ones stop counting.
        s.read(cid, "bob", "m15")
        #expect(s.unread(cid, "bob") == 5)
        #expect(s.reducer.channels[0].floors.isEmpty == false)  // cat's still counts
        s.markRead(cid, "cat")
        #expect(s.unread(cid, "cat") == 0)
        #expect(s.reducer.channels[0].floors.isEmpty)
    }

    @Test func unreadCountsAndMentionsSurviveASnapshot() throws {
        var s = Script()
        s.reducer.retainMessages = 4
        s.create(cid, ["ann", "bob"])
        for n in 1...10 {
            s.send(.messageNew(cid: cid, message: NewMessage(
                id: "m\(n)", userID: "ann", createdAt: s.nextTime, mentionedUsers: n % 2 == 0 ? ["bob"] : [])))
        }
        #expect(s.unread(cid, "bob") == 10)
        #expect(s.reducer.unreadMentions(cid: cid, userID: "bob") == 5)
        var restored = try ReceiptReducer(snapshot: s.reducer.encodeSnapshot())
        restored.retainMessages = 4
        #expect(restored.encodeSnapshot() == s.reducer.encodeSnapshot())
        #expect(restored.unreadMessages(cid: cid, userID: "bob") == 10)
        #expect(restored.unreadMentions(cid: cid, userID: "bob") == 5)
    }

    @Test func aTruncationTakesWhatWasForgottenToo() {
        var s = channel(messages: 20)
        let out = s.send(.channelTruncated(cid: cid, messageID: "m14"))
        #expect(out.map(\.subject) == ["@bob", "@cat"])
        #expect(s.unread(cid, "bob") == 6)
        #expect(s.unread(cid, "cat") == 6)
        // Nothing left before m15: truncating through it again takes nothing.
        #expect(s.send(.channelTruncated(cid: cid, messageID: "m14")).first?.json["reason"] == .string("unknown_message"))
    }

    /// Rule 25's choices: a forgotten id is a new message again, and a hard `user.deleted`
    /// deletes the messages the channel keeps while the forgotten ones still count.
    @Test func aForgottenIdIsNewAgainAndAHardDeleteTakesOnlyWhatIsKept() {
        var s = channel(messages: 20)  // m1–m12 forgotten, m13–m20 kept
        #expect(s.reducer.channels[0].forgotten == 12)
        s.message(cid, "m3", from: "ann")  // a forgotten id: a new message, and m13 goes
        #expect(s.reducer.channels[0].forgotten == 13)
        #expect(s.unread(cid, "bob") == 19)  // he read m2
        #expect(s.unread(cid, "cat") == 21)
        s.send(.userDeleted(userID: "ann", hard: true))
        // The eight kept are deleted; the forgotten m1–m13 still count.
        #expect(s.unread(cid, "bob") == 11)
        #expect(s.unread(cid, "cat") == 13)
    }

    @Test func aThreadGoesWithItsForgottenParentAndItsChannelRepliesStay() {
        var s = Script()
        s.reducer.retainMessages = 4
        s.create(cid, ["ann", "bob"])
        s.message(cid, "p", from: "ann")
        for (id, shown) in [("r1", false), ("r2", true)] {
            s.send(.messageNew(cid: cid, message: NewMessage(
                id: id, userID: "bob", createdAt: s.nextTime, parentID: "p", showInChannel: shown)))
        }
        for n in 1...3 { s.message(cid, "m\(n)", from: "ann") }
        // p is forgotten, and its thread with it: r1 is gone, r2 stays as a channel message.
        #expect(s.reducer.channels[0].threads.isEmpty)
        #expect(s.read(cid, "ann", "r1").first?.json["reason"] == .string("unknown_message"))
        #expect(s.read(cid, "ann", "r2").map(\.type) == ["message.read", "notification.mark_read"])
        #expect(s.unread(cid, "bob") == 4)  // p, m1–m3 (r2 is his own)
    }

    @Test func theLatestChannelMessageIsNeverForgotten() {
        var s = Script()
        s.reducer.retainMessages = 2
        s.create(cid, ["ann", "bob"])
        s.message(cid, "p", from: "ann")
        for n in 1...6 {
            s.send(.messageNew(cid: cid, message: NewMessage(id: "r\(n)", userID: "bob", createdAt: s.nextTime, parentID: "p")))
        }
        // Replies only since p: p stays, so a mark read still has it to read up to.
        #expect(s.reducer.messageCount(of: cid) == 7)
        #expect(s.markRead(cid, "bob").map(\.type) == ["message.read", "notification.mark_read"])
    }

    /// Guards the property test: the generated sequences with retention forget
    /// messages, keep floors, and name forgotten messages in acks.
    @Test func generatedSequencesExerciseRetention() {
        var forgot = 0
        var floors = 0
        var unknown = 0
        for seed in stride(from: UInt64(1), to: 300, by: 3) {
            var generator = EventGenerator(seed: seed)
            var reducer = ReceiptReducer()
            reducer.retainMessages = 2 + Int(seed / 3 % 6)
            for _ in 0..<150 {
                let outputs = reducer.apply(generator.next())
                unknown += outputs.filter { $0.json["reason"] == .string("unknown_message") }.count
                if reducer.channels.contains(where: { !$0.floors.isEmpty }) { floors += 1 }
            }
            if reducer.channels.contains(where: { $0.forgotten > 0 }) { forgot += 1 }
        }
        #expect(forgot > 50)
        #expect(floors > 1_000)
        #expect(unknown > 100)
    }
}
