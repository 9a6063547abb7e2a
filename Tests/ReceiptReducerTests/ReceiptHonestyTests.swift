import EventBusCore
import ReceiptReducer
import Testing

/// Receipts never reveal what privacy hides (docs/events.md rules 3, 6, 18
/// and 19), one test per scenario. Every reply checked here is the full one,
/// before any privacy filter: what it shows, everyone may see.
@Suite struct ReceiptHonestyTests {
    let cid = "messaging:team"

    /// ann, bob and cat; ann posted m1, m2, m3 at 09:01–09:03.
    func team() -> Script {
        var s = Script()
        s.create(cid, ["ann", "bob", "cat"])
        for i in 1...3 { s.message(cid, "m\(i)", from: "ann") }
        return s
    }

    static func at(_ clock: String) -> String { "2026-11-22T\(clock):00.000Z" }

    /// `user` in `viewer`'s `channel_state`.
    func entry(_ s: Script, _ user: String, viewer: String) throws -> JSONValue? {
        let state = try s.query("channel_state", [("cid", .string(cid)), ("viewer", .string(viewer))])
        guard case .array(let members)? = state["members"] else { return nil }
        return members.first { $0["user_id"] == .string(user) }
    }

    /// The user ids in `message_receipts`' readers of `message`, as ann sees them.
    func readers(_ s: Script, _ message: String) throws -> [String] {
        let reply = try s.query(
            "message_receipts", [("cid", .string(cid)), ("message_id", .string(message)), ("viewer", .string("ann"))])
        guard case .array(let readers)? = reply["readers"] else { return [] }
        return readers.compactMap { $0["user_id"]?.stringValue }
    }

    func readReceipts(_ s: inout Script, _ user: String, _ on: Bool) {
        s.send(.userUpdated(userID: user, deliveryReceipts: nil, readReceipts: on))
    }

    // Item 1: mark unread is private.

    @Test func bobMarkingM2UnreadMovesNothingAnnSees() throws {
        var s = team()
        s.read(cid, "bob", "m3", at: Self.at("09:10"))
        let out = s.markUnread(cid, "bob", "m2")
        #expect(out.map(\.subject) == ["@bob"])  // his devices only
        // ann still sees bob at m3, read at 09:10, and among m2's and m3's readers.
        let seen = try entry(s, "bob", viewer: "ann")
        #expect(seen?["last_read_message_id"] == .string("m3"))
        #expect(seen?["last_read"] == .string(Self.at("09:10")))
        #expect(try readers(s, "m2") == ["bob"])
        #expect(try readers(s, "m3") == ["bob"])
        // bob and his devices see his own watermark: m2 and m3 unread.
        let own = try entry(s, "bob", viewer: "bob")
        #expect(own?["last_read_message_id"] == .string("m1"))
        #expect(own?["unread_messages"] == num(2))
        let counts = try s.query("unread_counts", [("user_id", .string("bob"))])
        #expect(counts["total_unread_count"] == num(2))
        // Reading m2 again catches his own watermark up: his devices hear of it, the channel does not.
        #expect(s.read(cid, "bob", "m2").map(\.type) == ["notification.mark_read"])
        #expect(s.unread(cid, "bob") == 1)
        // Reading past what others saw moves the public watermark again.
        s.message(cid, "m4", from: "ann")
        #expect(s.read(cid, "bob", "m4").map(\.type) == ["message.read", "notification.mark_read"])
        #expect(s.reducer.readWatermark(cid: cid, userID: "bob") == .some("m4"))
    }

    // Item 2: read privacy holds through the delivery receipt.

    @Test func aReadWithReadReceiptsOffGivesNoDeliveryTimeAndALaterDeliveryStillShows() throws {
        var s = team()
        readReceipts(&s, "bob", false)
        // bob reads m3 at 10:00: nothing public moves; the audit and his own devices hear of it.
        let read = s.read(cid, "bob", "m3", at: Self.at("10:00"))
        #expect(read.map(\.type) == ["receipt.suppressed", "notification.mark_read"])
        #expect(read.first?.stage == "diag" && read.first?.json["reason"] == .string("user_setting"))
        #expect(s.reducer.deliveredWatermark(cid: cid, userID: "bob") == .some(nil))
        let before = try entry(s, "bob", viewer: "ann")
        #expect(before?["last_delivered_at"] == .null)
        #expect(before?["last_read"] == .null)
        // His phone's delivery ack, made after the read, still reaches the channel, at its own time.
        let delivered = s.delivered(cid, "bob", "m3", at: Self.at("10:05"))
        #expect(delivered.map(\.type) == ["message.delivered"])
        #expect(delivered.first?.json["last_delivered_at"] == .string(Self.at("10:05")))
        #expect(try entry(s, "bob", viewer: "ann")?["last_delivered_at"] == .string(Self.at("10:05")))
        // The order of his acks tells nothing: a second read emits no delivery.
        s.message(cid, "m4", from: "ann")
        #expect(!s.read(cid, "bob", "m4", at: Self.at("10:10")).contains { $0.type == "message.delivered" })
        #expect(s.reducer.deliveredWatermark(cid: cid, userID: "bob") == .some("m3"))
    }

    @Test func aChannelTypeWithoutReadEventsHidesReadsTheSameWay() throws {
        var s = team()
        s.send(.channelTypeUpdated(name: "messaging", deliveryEvents: nil, readEvents: false))
        s.read(cid, "bob", "m2", at: Self.at("10:00"))
        #expect(s.reducer.readWatermark(cid: cid, userID: "bob") == .some(nil))
        #expect(s.reducer.ownReadWatermark(cid: cid, userID: "bob") == .some("m2"))
        #expect(s.delivered(cid, "bob", "m2").map(\.type) == ["message.delivered"])
    }

    @Test func aDeliveryWithDeliveryReceiptsOffMovesOnlyTheOwnWatermark() throws {
        var s = team()
        s.send(.userUpdated(userID: "bob", deliveryReceipts: false, readReceipts: nil))
        #expect(s.delivered(cid, "bob", "m2").map(\.type) == ["receipt.suppressed"])  // audited, not told
        #expect(s.delivered(cid, "bob", "m2").isEmpty)  // a duplicate: nothing
        #expect(s.reducer.deliveredWatermark(cid: cid, userID: "bob") == .some(nil))
        s.send(.userUpdated(userID: "bob", deliveryReceipts: true, readReceipts: nil))
        #expect(try entry(s, "bob", viewer: "ann")?["last_delivered_message_id"] == .null)
        #expect(s.delivered(cid, "bob", "m3").map(\.type) == ["message.delivered"])
        #expect(s.reducer.deliveredWatermark(cid: cid, userID: "bob") == .some("m3"))
    }

    // Item 3: turning receipts back on reveals nothing from while they were off.

    @Test func bobsReadAtTenWithReceiptsOffIsNeverSeenAfterHeTurnsThemOnAtEleven() throws {
        var s = team()
        s.read(cid, "bob", "m1", at: Self.at("09:30"))
        readReceipts(&s, "bob", false)
        s.read(cid, "bob", "m2", at: Self.at("10:00"))
        readReceipts(&s, "bob", true)
        // At 11:00 ann sees bob where he was with receipts on: m1 at 09:30, not m2 at 10:00.
        let seen = try entry(s, "bob", viewer: "ann")
        #expect(seen?["last_read_message_id"] == .string("m1"))
        #expect(seen?["last_read"] == .string(Self.at("09:30")))
        #expect(try readers(s, "m2") == [])
        let list = try s.query("message_receipts", [
            ("cid", .string(cid)), ("message_id", .string("m2")), ("viewer", .string("ann")), ("list", .string("read")),
        ])
        #expect(list["members"] == .array([]))
        // His own badge knew all along.
        #expect(s.unread(cid, "bob") == 1)
        // His next read with receipts on shows, at its own time.
        let next = s.read(cid, "bob", "m3", at: Self.at("11:30"))
        #expect(next.first?.json["last_read"] == .string(Self.at("11:30")))
        #expect(try readers(s, "m2") == ["bob"])
        let passed = try s.query("message_receipts", [
            ("cid", .string(cid)), ("message_id", .string("m2")), ("viewer", .string("ann")), ("list", .string("read")),
        ])
        #expect(passed["members"] == .array([.object([
            (key: "user_id", value: .string("bob")), (key: "read_at", value: .string(Self.at("11:30"))),
        ])]))
    }

    @Test func aReadMadeWithReceiptsOffIsNotShownByAnEqualReadAfterwards() throws {
        var s = team()
        readReceipts(&s, "bob", false)
        s.read(cid, "bob", "m2", at: Self.at("10:00"))
        readReceipts(&s, "bob", true)
        // The same message acked again with receipts on: a read others may see, at its new time.
        let again = s.read(cid, "bob", "m2", at: Self.at("11:00"))
        #expect(again.map(\.type) == ["message.read"])
        #expect(again.first?.json["last_read"] == .string(Self.at("11:00")))
    }
}

extension ReceiptHonestyTests {
    /// ann's m1 with replies r1, r2 from ann; bob and cat take part (mentioned in r1).
    func thread() -> Script {
        var s = team()
        for (id, mentions) in [("r1", ["bob", "cat"]), ("r2", [])] {
            s.send(.messageNew(cid: cid, message: NewMessage(
                id: id, userID: "ann", createdAt: s.nextTime, mentionedUsers: mentions, parentID: "m1")))
        }
        return s
    }

    func participant(_ s: Script, _ user: String, viewer: String) throws -> JSONValue? {
        let state = try s.query("thread_state", [("cid", .string(cid)), ("parent_id", .string("m1")), ("viewer", .string(viewer))])
        guard case .array(let all)? = state["participants"] else { return nil }
        return all.first { $0["user_id"] == .string(user) }
    }

    @Test func bobMarkingAReplyUnreadMovesNothingAnnSeesInTheThread() throws {
        var s = thread()
        s.read(cid, "bob", "r2", at: Self.at("09:20"))
        let out = s.markUnread(cid, "bob", "r2")
        #expect(out.map(\.subject) == ["@bob"])
        #expect(out.first?.json["unread_replies"] == num(1))
        #expect(try participant(s, "bob", viewer: "ann")?["last_read_message_id"] == .string("r2"))
        #expect(try participant(s, "bob", viewer: "bob")?["last_read_message_id"] == .string("r1"))
        let receipts = try s.query(
            "message_receipts", [("cid", .string(cid)), ("message_id", .string("r2")), ("viewer", .string("ann"))])
        #expect(receipts["read_count"] == num(1))
        // Catching up again tells only his devices.
        #expect(s.read(cid, "bob", "r2").map(\.type) == ["notification.mark_read"])
    }

    @Test func aThreadReadWithReceiptsOffIsNeverShownAndLeavesTheDeliveryToTheDevice() throws {
        var s = thread()
        readReceipts(&s, "bob", false)
        #expect(s.read(cid, "bob", "r2", at: Self.at("10:00")).map(\.type) == ["receipt.suppressed", "notification.mark_read"])
        readReceipts(&s, "bob", true)
        let seen = try participant(s, "bob", viewer: "ann")
        #expect(seen?["last_read_message_id"] == .null && seen?["last_delivered_message_id"] == .null)
        #expect(try participant(s, "bob", viewer: "bob")?["unread_replies"] == num(0))
        let delivered = s.delivered(cid, "bob", "r2", at: Self.at("10:05"))
        #expect(delivered.first?.json["last_delivered_at"] == .string(Self.at("10:05")))
    }
}

extension ReceiptHonestyTests {
    /// Found by `make chaos` (seed 11860895012998422386, reducer-only round): a delivery
    /// acked with delivery receipts off and acked again once they were on went to `out`
    /// twice, m1 then m1 — and a hidden read ahead of a later shown one would have gone
    /// backwards. Hidden acks now become no event at all: `out` only ever moves forward.
    @Test func anAckHiddenThenShownReachesOutOnceSeed11860895012998422386() {
        var s = team()
        s.send(.userUpdated(userID: "bob", deliveryReceipts: false, readReceipts: false))
        var out: [ReducerOutput] = []
        out += s.delivered(cid, "bob", "m1")
        out += s.read(cid, "bob", "m3")
        s.send(.userUpdated(userID: "bob", deliveryReceipts: true, readReceipts: true))
        out += s.delivered(cid, "bob", "m1")
        out += s.read(cid, "bob", "m2")
        let channel = out.filter { $0.stage == "out" && $0.subject == cid }
        #expect(channel.map(\.type) == ["message.delivered", "message.read"])
        #expect(channel.map { $0.json["last_delivered_message_id"] ?? $0.json["last_read_message_id"] } == [.string("m1"), .string("m2")])
        #expect(out.filter { $0.type == "receipt.suppressed" }.count == 2)
    }
}
