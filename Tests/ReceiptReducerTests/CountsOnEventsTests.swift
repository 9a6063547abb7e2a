import EventBusCore
import ReceiptReducer
import Testing

/// docs/events.md rule 26: `message.read` and `message.delivered` carry the counts of the
/// message their watermark points at, as `message_receipts` gives them.
@Suite struct CountsOnEventsTests {
    let cid = "messaging:team"

    func team() -> Script {
        var s = Script()
        s.create(cid, ["ann", "bob", "cat"])
        s.message(cid, "m1", from: "ann")
        s.message(cid, "m2", from: "ann")
        return s
    }

    func receipts(_ s: Script, _ id: String) throws -> (JSONValue?, JSONValue?) {
        let reply = try s.query("message_receipts", [("cid", .string(cid)), ("message_id", .string(id)), ("viewer", .string("ann"))])
        return (reply["read_count"], reply["delivered_count"])
    }

    @Test func aReadCarriesTheCountsOfItsMessageAndADeliveryItsDeliveredCount() throws {
        var s = team()
        let delivered = s.delivered(cid, "bob", "m2")
        #expect(delivered[0].keys.suffix(1) == ["delivered_count"])
        #expect(delivered[0].json["delivered_count"] == num(1))
        let read = s.read(cid, "cat", "m2")
        #expect(read[0].json["read_count"] == num(1))
        #expect(read[0].json["delivered_count"] == num(2))
        // The same counts message_receipts gives for m2 now.
        let (readCount, deliveredCount) = try receipts(s, "m2")
        #expect(read[0].json["read_count"] == readCount)
        #expect(read[0].json["delivered_count"] == deliveredCount)
        #expect(read[0].json["redacted"] == nil)
    }

    @Test func theSenderAndMembersWhoJoinedAfterTheMessageCountInNothing() {
        var s = Script()
        s.create(cid, ["ann", "bob"])
        s.message(cid, "m1", from: "ann")
        s.send(.memberAdded(cid: cid, userID: "dan"))  // dan starts at m1: past it, but not a reader of it
        s.message(cid, "m2", from: "ann")
        s.read(cid, "ann", "m2")  // the sender reads her own message
        let bob = s.read(cid, "bob", "m1")
        #expect(bob[0].json["read_count"] == num(1))
        #expect(bob[0].json["delivered_count"] == num(1))
        let dan = s.read(cid, "dan", "m2")
        #expect(dan[0].json["read_count"] == num(1))
    }

    @Test func aHiddenReaderIsInTheFullCountsAndOutOfTheRedactedOnes() throws {
        var s = team()
        s.read(cid, "cat", "m1")  // receipts on: a public read of m1
        s.send(.userUpdated(userID: "cat", deliveryReceipts: false, readReceipts: false))
        let read = s.read(cid, "bob", "m1")
        #expect(read[0].keys == ["cid", "user_id", "last_read_message_id", "last_read", "read_count", "delivered_count", "redacted"])
        #expect(read[0].json["read_count"] == num(2))
        #expect(read[0].json["delivered_count"] == num(2))
        #expect(read[0].json["redacted"] == .object([(key: "read_count", value: num(1)), (key: "delivered_count", value: num(1))]))
    }

    @Test func aChannelTypeWithDeliveryEventsOffLeavesEveryoneOutOfTheRedactedDeliveredCount() {
        var s = team()
        s.delivered(cid, "cat", "m1")
        s.send(.channelTypeUpdated(name: "messaging", deliveryEvents: false, readEvents: nil))
        let read = s.read(cid, "bob", "m1")
        #expect(read[0].json["read_count"] == num(1))
        // cat's delivery from before the toggle; bob's read moves no public delivered watermark
        // while the type hides deliveries (rule 19).
        #expect(read[0].json["delivered_count"] == num(1))
        #expect(read[0].json["redacted"] == .object([(key: "delivered_count", value: num(0))]))
    }

    @Test func aThreadReplysCountsAreOverTheThreadsParticipants() throws {
        var s = team()
        s.send(.messageNew(cid: cid, message: NewMessage(id: "r1", userID: "bob", createdAt: s.nextTime, parentID: "m1")))
        // The thread's participants: ann (the parent's author) and bob (the reply's); cat is not one.
        let ann = s.read(cid, "ann", "r1")
        #expect(ann[0].json["parent_id"] == .string("m1"))
        #expect(ann[0].json["read_count"] == num(1))
        #expect(ann[0].json["delivered_count"] == num(1))
        let (readCount, deliveredCount) = try receipts(s, "r1")
        #expect(ann[0].json["read_count"] == readCount)
        #expect(ann[0].json["delivered_count"] == deliveredCount)
    }
}
