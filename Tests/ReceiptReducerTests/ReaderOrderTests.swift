import EventBusCore
import ReceiptReducer
import Testing

/// `message_receipts` lists readers newest first: by `last_read` (when the
/// read watermark last moved), equal times by the order the reducer applied
/// the moves, later first; the cursor holds while members keep reading.
@Suite struct ReaderOrderTests {
    let cid = "messaging:general"

    /// One page of readers of `message` as (user ids, next cursor).
    func page(_ s: Script, _ message: String, pageSize: Int = 50, cursor: JSONValue = .null, viewer: String = "ann")
        throws -> (names: [String], next: JSONValue)
    {
        var params: [(String, JSONValue)] = [
            ("cid", .string(cid)), ("message_id", .string(message)), ("viewer", .string(viewer)),
            ("page_size", num(pageSize)),
        ]
        if cursor != .null { params.append(("cursor", cursor)) }
        let reply = try s.query("message_receipts", params)
        guard case .array(let readers)? = reply["readers"] else { return ([], .null) }
        return (readers.compactMap { $0["user_id"]?.stringValue }, reply["next_cursor"] ?? .null)
    }

    /// ann sends m1 and m2; u0…u9 read m1 one after the other (times one second apart).
    func tenReaders() -> Script {
        var s = Script()
        s.create(cid, ["ann"] + (0..<10).map { "u\($0)" })
        s.message(cid, "m1", from: "ann")
        s.message(cid, "m2", from: "ann")
        for i in 0..<10 { s.read(cid, "u\(i)", "m1") }
        return s
    }

    @Test func theMostRecentReaderComesFirst() throws {
        var s = tenReaders()
        #expect(try page(s, "m1").names == (0..<10).reversed().map { "u\($0)" })
        // Any move of the public read watermark counts; a mark unread is private and moves nothing others see.
        s.read(cid, "u4", "m2")
        s.read(cid, "u2", "m2")
        s.markUnread(cid, "u4", "m2")
        #expect(try page(s, "m1").names == ["u2", "u4", "u9", "u8", "u7", "u6", "u5", "u3", "u1", "u0"])
        #expect(try page(s, "m2").names == ["u2", "u4"])
        // Sending a message is not reading: the order stays.
        s.message(cid, "m3", from: "u0")
        #expect(try page(s, "m1").names.first == "u2")
        #expect(try page(s, "m3").names == [])
    }

    @Test func equalTimesListTheLaterMoveFirst() throws {
        var s = Script()
        s.create(cid, ["ann", "bob", "cat", "dan"])
        s.message(cid, "m1", from: "ann")
        let at = "2026-11-22T05:00:00.000Z"
        for user in ["cat", "bob", "dan"] { s.read(cid, user, "m1", at: at) }
        #expect(try page(s, "m1").names == ["dan", "bob", "cat"])
        // Members who join together join at one time (here before 05:00): the later in the list first.
        s.message(cid, "m2", from: "ann")
        s.create(cid, ["eve", "fox"])  // after m2: they count for neither m1 nor m2
        s.send(.memberAdded(cid: cid, userID: "gus"))  // and gus for neither
        s.message(cid, "m3", from: "ann")
        for user in ["bob", "cat", "dan"] { s.read(cid, user, "m2", at: at) }
        #expect(try page(s, "m1").names == ["dan", "cat", "bob"])
        #expect(try page(s, "m2").names == ["dan", "cat", "bob"])
        // A read of m3 moves eve, fox and gus: readers of m3, still of neither m1 nor m2.
        for user in ["gus", "eve", "fox"] { s.read(cid, user, "m3", at: at) }
        #expect(try page(s, "m3").names == ["fox", "eve", "gus"])
        #expect(try page(s, "m1").names == ["dan", "cat", "bob"])
    }

    @Test func aReadDatedEarlierTakesItsPlaceByTime() throws {
        var s = tenReaders()
        // u9 reads m2 with a read_at before u5's read of m1: they list by the time they show.
        s.read(cid, "u9", "m2", at: EventGenerator.time(8_500))  // between u4's read of m1 (at 8 s) and u5's (9 s)
        let names = try page(s, "m1").names
        #expect(names == ["u8", "u7", "u6", "u5", "u9", "u4", "u3", "u2", "u1", "u0"])
        #expect(try page(s, "m2").names == ["u9"])
    }

    @Test func theCursorHoldsWhileMembersKeepReading() throws {
        var s = tenReaders()
        let first = try page(s, "m1", pageSize: 3)
        #expect(first.names == ["u9", "u8", "u7"])
        s.read(cid, "u5", "m2")  // not listed yet: moves to the front, ahead of the cursor, so not on a later page
        s.read(cid, "u8", "m2")  // listed already: not repeated
        s.read(cid, "u7", "m2")  // the cursor's own reader moves: the cursor still holds
        s.send(.memberRemoved(cid: cid, userID: "u1"))  // no longer a member: not listed
        let second = try page(s, "m1", pageSize: 3, cursor: first.next)
        #expect(second.names == ["u6", "u4", "u3"])
        let third = try page(s, "m1", pageSize: 3, cursor: second.next)
        #expect(third.names == ["u2", "u0"])
        #expect(third.next == .null)
        // A new first page starts with the newest readers.
        #expect(try page(s, "m1", pageSize: 3).names == ["u7", "u8", "u5"])
        // A member added back keeps their place by the time of their last read.
        s.send(.memberAdded(cid: cid, userID: "u1"))
        #expect(try page(s, "m1").names == ["u7", "u8", "u5", "u9", "u6", "u4", "u3", "u2", "u1", "u0"])
    }

    @Test func aMoveDatedBeforeTheCursorCanListAReaderAgain() throws {
        // The one exception to "nobody repeated": a move dated before the cursor's reader.
        var s = tenReaders()
        let first = try page(s, "m1", pageSize: 3)
        #expect(first.names == ["u9", "u8", "u7"])
        s.read(cid, "u9", "m2", at: EventGenerator.time(3_500))  // before everyone's read of m1 (u0's at 4 s)
        let rest = try page(s, "m1", pageSize: 50, cursor: first.next)
        #expect(rest.names == ["u6", "u5", "u4", "u3", "u2", "u1", "u0", "u9"])
    }

    @Test func aFullFirstPageKnowsMoreFollowWithoutLookingFurther() throws {
        let s = tenReaders()
        var cursor: JSONValue = .null
        var all: [String] = []
        for size in [5, 5] {
            let p = try page(s, "m1", pageSize: size, cursor: cursor)
            all += p.names
            cursor = p.next
        }
        #expect(all == (0..<10).reversed().map { "u\($0)" })
        #expect(cursor == .null)
        let exact = try page(s, "m1", pageSize: 10)
        #expect(exact.names.count == 10 && exact.next == .null)
    }

    static let badCursors = ["garbage", "r2:dan", "r.5", "r5.", "r1.-1", "rx.1", "r1.2.3", "u:ann"]

    @Test(arguments: badCursors)
    func aCursorThisServiceDidNotWriteIsABadRequest(cursor: String) throws {
        let s = tenReaders()
        let params: JSONValue = .object([
            (key: "cid", value: .string(cid)), (key: "message_id", value: .string("m1")),
            (key: "viewer", value: .string("ann")), (key: "cursor", value: .string(cursor)),
        ])
        let error = s.queryError("message_receipts", params)
        #expect(error?.code == "bad_request")
        #expect(error?.message.hasPrefix("params.cursor:") == true)
    }
}
