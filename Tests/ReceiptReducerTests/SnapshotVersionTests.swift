import EventBusCore
import Testing

@testable import ReceiptReducer

/// Snapshots carry the readers' order (version 3: a read stamp per member
/// record), so a restart answers `message_receipts` identically, cursors
/// included; versions 1 and 2, without stamps, still load, the order rebuilt
/// by read time, then user id.
@Suite struct SnapshotVersionTests {
    static let cid = "messaging:team"
    static let users = ["ann", "bob", "cat", "dan", "eve"]

    /// One member record as the snapshot holds it.
    struct Record {
        var user: UInt64
        var read: Int64
        var isMember: Bool
        var time: String
        var stamp: UInt64? = nil
    }

    /// A snapshot of `version` written field by field as docs describe it: the
    /// users above, no irregular times, no rejections, one channel with m1 and
    /// m2 (both ann's) and `records`, then (version ≥ 2) no privacy settings.
    static func snapshot(version: UInt8, _ records: [Record], histories: [(slot: UInt64, read: [(Int64, String)], delivered: [(Int64, String)])] = [],
                         own: [(slot: UInt64, read: Int64, time: String, delivered: Int64)] = [])
        -> [UInt8]
    {
        var w = SnapshotWriter()
        w.bytes = ReceiptReducer.snapshotMagic + [version]
        w.uint(UInt64(users.count))
        for user in users { w.string(user) }
        w.uint(0)
        // Four reasons before version 7 (`banned` came with it).
        let reasons = version >= 7 ? RejectionReason.allCases.count : 4
        w.uint(UInt64(reasons))
        for _ in 0..<reasons { w.uint(0) }
        w.uint(1)
        w.string(cid)
        w.uint(2)
        for id in ["m1", "m2"] {
            w.string(id)
            w.uint(0)  // sender ann, regular
            if version >= 5 { w.uint(0) }  // not a reply
        }
        w.uint(UInt64(records.count))
        for record in records {
            let time = TimeTable.parse(record.time)!
            w.uint(record.user)
            w.int(record.read)
            w.int(record.read)
            w.bytes.append(record.isMember ? 1 : 0)
            w.int(time)
            w.int(time)
            if version >= 3 { w.uint(record.stamp!) }
            if version >= 6 { w.uint(0) }  // joined before the first message
        }
        if version >= 2 {
            w.uint(UInt64(users.count))
            w.bytes += Array(repeating: 0, count: users.count)
            w.uint(0)
        }
        if version >= 4 {
            w.uint(0)  // the channel mentions nobody
            w.uint(0)  // and its members keep the default settings
        }
        if version >= 5 {
            w.uint(UInt64(histories.count))
            for history in histories {
                w.uint(history.slot)
                for crossings in [history.read, history.delivered] {
                    w.uint(UInt64(crossings.count))
                    for (position, time) in crossings {
                        w.uint(UInt64(position))
                        w.int(TimeTable.parse(time)!)
                    }
                }
            }
        }
        if version >= 6 {
            w.uint(UInt64(own.count))
            for entry in own {
                w.uint(entry.slot)
                w.int(entry.read)
                w.int(TimeTable.parse(entry.time)!)
                w.int(entry.delivered)
            }
        }
        if version >= 7 {
            w.uint(0)  // nobody banned in the channel
            w.uint(0)  // nor everywhere
        }
        if version >= 8 {
            w.uint(0)  // nothing forgotten (rule 25)
            w.bytes.append(0)
            w.uint(0)  // no reply kept without its thread
            w.uint(0)  // no floors
        }
        return w.bytes
    }

    /// ann sent m1 and m2; bob read m1 at 09:08, cat m2 and dan m1 both at 09:05; eve read m1 at 09:09 and left.
    static let records = [
        Record(user: 0, read: 1, isMember: true, time: "2026-11-22T09:02:00.000Z"),
        Record(user: 1, read: 0, isMember: true, time: "2026-11-22T09:08:00.000Z"),
        Record(user: 2, read: 1, isMember: true, time: "2026-11-22T09:05:00.000Z"),
        Record(user: 3, read: 0, isMember: true, time: "2026-11-22T09:05:00.000Z"),
        Record(user: 4, read: 0, isMember: false, time: "2026-11-22T09:09:00.000Z"),
    ]

    static func readers(_ reducer: ReceiptReducer, pageSize: Int = 50, cursor: JSONValue = .null) throws -> JSONValue {
        var params: [(key: String, value: JSONValue)] = [
            (key: "cid", value: .string(cid)), (key: "message_id", value: .string("m1")),
            (key: "viewer", value: .string("ann")), (key: "page_size", value: num(pageSize)),
        ]
        if cursor != .null { params.append((key: "cursor", value: cursor)) }
        return try JSONParser.parse(reducer.query(method: "message_receipts", params: .object(params)))
    }

    static func names(_ reply: JSONValue) -> [String] {
        guard case .array(let readers)? = reply["readers"] else { return [] }
        return readers.compactMap { $0["user_id"]?.stringValue }
    }

    static func input(_ seq: UInt64, _ payload: IngressPayload) -> ReducerInput {
        ReducerInput(seq: seq, time: "2026-11-22T09:30:00.000Z", payload: payload)
    }

    @Test(arguments: [UInt8(1), 2])
    func anOlderSnapshotLoadsWithTheOrderRebuiltByTimeThenUserID(version: UInt8) throws {
        var reducer = try ReceiptReducer(snapshot: Self.snapshot(version: version, Self.records))
        // Equal times (cat, dan) by user id; eve is not a member; ann sent m1.
        #expect(Self.names(try Self.readers(reducer)) == ["bob", "cat", "dan"])
        // Stamps go on past the rebuilt ones: dan's new read at cat's time lists first of the two.
        _ = reducer.apply(Self.input(1, .messageRead(cid: Self.cid, userID: "dan", messageID: "m2", readAt: "2026-11-22T09:05:00.000Z")))
        #expect(Self.names(try Self.readers(reducer)) == ["bob", "dan", "cat"])
        // eve comes back with her place (09:09).
        _ = reducer.apply(Self.input(2, .memberAdded(cid: Self.cid, userID: "eve")))
        #expect(Self.names(try Self.readers(reducer)) == ["eve", "bob", "dan", "cat"])
        // Written again, it is the current version and loads to the same answers.
        let bytes = reducer.encodeSnapshot()
        #expect(bytes[3] == ReceiptReducer.snapshotVersion)
        let restored = try ReceiptReducer(snapshot: bytes)
        #expect(restored.encodeSnapshot() == bytes)
        #expect(try Self.readers(restored) == Self.readers(reducer))
    }

    @Test func aVersion3SnapshotKeepsTheStampsItHolds() throws {
        // Stamps that disagree with the times' order of user ids: the snapshot's, not a rebuilt order.
        var records = Self.records
        for (i, stamp) in [UInt64(0), 1, 7, 3, 9].enumerated() { records[i].stamp = stamp }
        var reducer = try ReceiptReducer(snapshot: Self.snapshot(version: 3, records))
        #expect(Self.names(try Self.readers(reducer)) == ["bob", "cat", "dan"])  // cat 7 after dan 3: cat first
        var swapped = records
        swapped[2].stamp = 2
        let other = try ReceiptReducer(snapshot: Self.snapshot(version: 3, swapped))
        #expect(Self.names(try Self.readers(other)) == ["bob", "dan", "cat"])
        // The next stamp is past the largest held (eve's 9, a removed member's): dan's read takes 10.
        _ = reducer.apply(Self.input(1, .messageRead(cid: Self.cid, userID: "dan", messageID: "m2", readAt: "2026-11-22T09:05:00.000Z")))
        var after = records
        after[3].read = 1
        after[3].stamp = 10
        // dan's watermarks passed m1 at his old time and m2 now (both 09:05): a history of his own.
        let passed: [(Int64, String)] = [(0, "2026-11-22T09:05:00.000Z"), (1, "2026-11-22T09:05:00.000Z")]
        #expect(reducer.encodeSnapshot()
            == Self.snapshot(version: ReceiptReducer.snapshotVersion, after, histories: [(3, passed, passed)]))
    }

    static func receiptList(_ reducer: ReceiptReducer, _ messageID: String) throws -> JSONValue {
        let params: [(key: String, value: JSONValue)] = [
            (key: "cid", value: .string(cid)), (key: "message_id", value: .string(messageID)),
            (key: "viewer", value: .string("ann")), (key: "list", value: .string("read")),
        ]
        return try JSONParser.parse(reducer.query(method: "message_receipts", params: .object(params)))["members"] ?? .null
    }

    @Test func aVersion4SnapshotLoadsWithEachWatermarkPassingEverythingAtItsLastMove() throws {
        var records = Self.records
        for (i, stamp) in [UInt64(0), 1, 2, 3, 4].enumerated() { records[i].stamp = stamp }
        let reducer = try ReceiptReducer(snapshot: Self.snapshot(version: 4, records))
        #expect(reducer.channels[0].histories.isEmpty)
        // cat read m2 at 09:05, so m1 too; bob and dan read m1 at their times.
        #expect(try Self.receiptList(reducer, "m1") == .array([
            .object([(key: "user_id", value: .string("bob")), (key: "read_at", value: .string("2026-11-22T09:08:00.000Z"))]),
            .object([(key: "user_id", value: .string("cat")), (key: "read_at", value: .string("2026-11-22T09:05:00.000Z"))]),
            .object([(key: "user_id", value: .string("dan")), (key: "read_at", value: .string("2026-11-22T09:05:00.000Z"))]),
        ]))
    }

    @Test func aVersion5SnapshotKeepsWhenTheWatermarksPassedTheMessages() throws {
        var records = Self.records
        for (i, stamp) in [UInt64(0), 1, 2, 3, 4].enumerated() { records[i].stamp = stamp }
        // cat passed m1 at 09:01 and m2 at 09:05.
        let cat: [(Int64, String)] = [(0, "2026-11-22T09:01:00.000Z"), (1, "2026-11-22T09:05:00.000Z")]
        let bytes = Self.snapshot(version: 5, records, histories: [(2, cat, cat)])
        let reducer = try ReceiptReducer(snapshot: bytes)
        #expect(reducer.encodeSnapshot() == Self.snapshot(version: ReceiptReducer.snapshotVersion, records, histories: [(2, cat, cat)]))
        guard case .array(let members) = try Self.receiptList(reducer, "m1") else { Issue.record("no members"); return }
        #expect(members[1]["read_at"] == .string("2026-11-22T09:01:00.000Z"))
        // Crossings that do not end at the watermark, or that the record implies alone, are refused.
        let off: [(Int64, String)] = [(0, "2026-11-22T09:01:00.000Z")]
        #expect(throws: SnapshotError.self) {
            try ReceiptReducer(snapshot: Self.snapshot(version: 5, records, histories: [(2, off, cat)]))
        }
        let implied: [(Int64, String)] = [(1, "2026-11-22T09:05:00.000Z")]
        #expect(throws: SnapshotError.self) {
            try ReceiptReducer(snapshot: Self.snapshot(version: 5, records, histories: [(2, implied, implied)]))
        }
    }

    @Test func aVersion6SnapshotKeepsTheOwnWatermarks() throws {
        var records = Self.records
        for (i, stamp) in [UInt64(0), 1, 2, 3, 4].enumerated() { records[i].stamp = stamp }
        // cat (public: m2) marked m2 unread at 09:10: her own read watermark is at m1.
        let bytes = Self.snapshot(version: 6, records, own: [(2, 0, "2026-11-22T09:10:00.000Z", 1)])
        let reducer = try ReceiptReducer(snapshot: bytes)
        // Written again as the current version, with the same content.
        #expect(reducer.encodeSnapshot() == Self.snapshot(version: ReceiptReducer.snapshotVersion, records, own: [(2, 0, "2026-11-22T09:10:00.000Z", 1)]))
        #expect(reducer.ownReadWatermark(cid: Self.cid, userID: "cat") == .some("m1"))
        #expect(reducer.readWatermark(cid: Self.cid, userID: "cat") == .some("m2"))
        #expect(reducer.unreadMessages(cid: Self.cid, userID: "cat") == 1)
        // A version 5 snapshot has none: own and public agree.
        let older = try ReceiptReducer(snapshot: Self.snapshot(version: 5, records))
        #expect(older.ownReadWatermark(cid: Self.cid, userID: "cat") == .some("m2"))
        // An entry the record implies, or out of range, is refused.
        #expect(throws: SnapshotError.self) {
            try ReceiptReducer(snapshot: Self.snapshot(version: 6, records, own: [(2, 1, "2026-11-22T09:05:00.000Z", 1)]))
        }
        #expect(throws: SnapshotError.self) {
            try ReceiptReducer(snapshot: Self.snapshot(version: 6, records, own: [(2, 5, "2026-11-22T09:10:00.000Z", 1)]))
        }
    }

    /// A record keeps 32 bits of stamp (``MemberState/readStamp``): a snapshot's
    /// larger stamps load ranked, in their order, and the readers' order stays.
    @Test func stampsBeyondThirtyTwoBitsLoadRankedInTheirOrder() throws {
        var records = Self.records
        let big = UInt64(UInt32.max)
        for (i, stamp) in [big * 5, 1, big * 3, big * 9, big * 7].enumerated() { records[i].stamp = stamp }
        let reducer = try ReceiptReducer(snapshot: Self.snapshot(version: 3, records))
        #expect(reducer.channels[0].members.map(\.readStamp) == [2, 0, 1, 4, 3])
        #expect(Self.names(try Self.readers(reducer)) == ["bob", "dan", "cat"])  // dan's 9·(2³²-1) after cat's 3·(2³²-1)
        #expect(reducer.channels[0].nextReadStamp == 5)
    }

    @Test func aVersion3SnapshotWithAStampTwiceIsRejected() {
        var records = Self.records
        for (i, stamp) in [UInt64(0), 1, 2, 2, 4].enumerated() { records[i].stamp = stamp }
        #expect(throws: SnapshotError.self) { try ReceiptReducer(snapshot: Self.snapshot(version: 3, records)) }
    }

    @Test func aRestartAnswersIdenticallyCursorsIncluded() throws {
        var s = Script()
        let users = (0..<40).map { "u\($0)" }
        s.create(Self.cid, ["ann"] + users)
        s.message(Self.cid, "m1", from: "ann")
        s.message(Self.cid, "m2", from: "ann")
        for (i, user) in users.enumerated() {
            // Some reads dated in the past, some at one shared time.
            let at: String? = i % 5 == 0 ? EventGenerator.time(500) : (i % 7 == 0 ? "2026-11-22T00:00:30.000Z" : nil)
            s.read(Self.cid, user, i % 3 == 0 ? "m2" : "m1", at: at)
        }
        s.send(.memberRemoved(cid: Self.cid, userID: "u4"))
        s.markUnread(Self.cid, "u9", "m2")
        let restored = try ReceiptReducer(snapshot: s.reducer.encodeSnapshot())
        // Every page, and every page from a cursor the original gave, is the same.
        var cursor: JSONValue = .null
        var pages = 0
        repeat {
            let want = try Self.readers(s.reducer, pageSize: 7, cursor: cursor)
            #expect(try Self.readers(restored, pageSize: 7, cursor: cursor) == want)
            cursor = want["next_cursor"] ?? .null
            pages += 1
        } while cursor != .null && pages < 20
        #expect(pages == 6)  // 39 readers of m1 (u4 left), 7 a page
        // And both go on alike.
        var copy = restored
        let next = ReducerInput(seq: 999, time: "2026-11-22T01:00:00.000Z", payload: .messageRead(cid: Self.cid, userID: "u1", messageID: "m2", readAt: nil))
        #expect(copy.apply(next) == s.reducer.apply(next))
        #expect(try Self.readers(copy) == Self.readers(s.reducer))
    }
}
