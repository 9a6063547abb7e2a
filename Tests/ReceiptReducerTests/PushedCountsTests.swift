import EventBusCore
import ReceiptReducer
import Testing

/// Counts a client keeps without polling (docs/events.md rule 24): with
/// `pushCountsUpTo` set, a channel message sends each member it counts for
/// their new counts, in channels up to that size.
@Suite struct PushedCountsTests {
    let cid = "messaging:push"

    func channel(limit: Int, members: [String] = ["ann", "bob", "cat"]) -> Script {
        var s = Script()
        s.reducer.pushCountsUpTo = limit
        s.create(cid, members)
        return s
    }

    @Test func eachMemberAMessageCountsForHearsTheirNewCounts() {
        var s = channel(limit: 3)
        s.message(cid, "m1", from: "ann")
        let out = s.message(cid, "m2", from: "ann")
        #expect(out.map { "\($0.subject) \($0.type)" } == [
            "\(cid) message.new", "@bob notification.message_new", "@cat notification.message_new",
        ])
        #expect(out[1].keys == [
            "cid", "user_id", "message_id", "unread_messages", "unread_mentions", "unread_channels", "total_unread_count",
            "total_unread_mentions",
        ])
        #expect(out[1].json["message_id"] == .string("m2"))
        #expect(out[1].json["unread_messages"] == num(2))
        #expect(out[1].json["total_unread_count"] == num(2))
    }

    @Test func aMessageThatCountsForNobodyPushesNothing() {
        var s = channel(limit: 3)
        #expect(s.message(cid, "s1", from: "ann", kind: .system).count == 1)
        #expect(s.message(cid, "q1", from: "ann", silent: true).count == 1)
        // A reply the channel does not show counts in its thread, not in the channel.
        #expect(s.send(.messageNew(cid: cid, message: NewMessage(
            id: "r1", userID: "bob", createdAt: s.nextTime, parentID: "s1"))).count == 1)
    }

    @Test func aChannelAboveTheLimitPushesNothing() {
        var s = channel(limit: 2)
        #expect(s.message(cid, "m1", from: "ann").map(\.type) == ["message.new"])
        s.send(.memberRemoved(cid: cid, userID: "cat"))
        #expect(s.message(cid, "m2", from: "ann").map(\.type) == ["message.new", "notification.message_new"])
    }

    @Test func offByDefault() {
        var s = Script()
        s.create(cid, ["ann", "bob"])
        #expect(s.message(cid, "m1", from: "ann").map(\.type) == ["message.new"])
    }

    /// docs/events.md's `json pushed` example: the worked example's steps with
    /// counts pushed, and the documented event among the outputs of its step.
    @Test func theDocumentedPushedEventIsTheReducers() throws {
        let doc = try EventsDoc.load()
        let block = try #require(doc.blocks.first { $0.words.contains("pushed") })
        let documented = try block.json()
        let id = try #require(documented["id"]?.stringValue)
        let parts = id.split(separator: ":")
        let (step, n) = (try #require(Int(parts[1])), try #require(Int(parts[2])))
        let example = try WorkedExample(doc)
        var reducer = ReceiptReducer()
        reducer.pushCountsUpTo = 100
        for s in example.steps where s.number <= step {
            let produced = try s.apply(to: &reducer)
            guard s.number == step else { continue }
            try #require(n < produced.count, "step \(step) emits \(produced.count) events")
            #expect(EventsDoc.envelope(of: produced[n], seq: step, n: n, time: s.time) == documented)
        }
    }
}
