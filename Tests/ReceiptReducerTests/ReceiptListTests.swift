import EventBusCore
import Testing

@testable import ReceiptReducer

/// `message_receipts` lists (docs/events.md "message_receipts", `list`): who
/// read a message, who it reached, who has not read it, who it has not
/// reached, paged by user id, each reader and recipient with the time their
/// watermark passed the message (rule 13).
@Suite struct ReceiptListTests {
    let cid = "messaging:team"

    /// A channel of `members` (event 1), then ann sends m1…m4 (events 2–5).
    func channel(_ members: [String] = ["ann", "bob", "cat"]) -> Script {
        var s = Script()
        s.create(cid, members)
        for id in ["m1", "m2", "m3", "m4"] { s.message(cid, id, from: "ann") }
        return s
    }

    func list(_ s: Script, _ list: String, _ messageID: String, viewer: String = "ann", pageSize: Int? = nil,
              cursor: JSONValue = .null) throws -> JSONValue {
        var params: [(String, JSONValue)] = [
            ("cid", .string(cid)), ("message_id", .string(messageID)), ("viewer", .string(viewer)), ("list", .string(list)),
        ]
        if let pageSize { params.append(("page_size", num(pageSize))) }
        if cursor != .null { params.append(("cursor", cursor)) }
        return try s.query("message_receipts", params)
    }

    /// `user_id` → the entry's time (`read_at` or `delivered_at`), or `.null` for an entry without one.
    func entries(_ reply: JSONValue) -> [String: JSONValue] {
        guard case .array(let members)? = reply["members"] else { return [:] }
        var result: [String: JSONValue] = [:]
        for member in members {
            result[member["user_id"]?.stringValue ?? "?"] = member["read_at"] ?? member["delivered_at"] ?? .null
        }
        return result
    }

    func names(_ reply: JSONValue) -> [String] {
        guard case .array(let members)? = reply["members"] else { return [] }
        return members.compactMap { $0["user_id"]?.stringValue }
    }

    static func at(_ seconds: Int) -> String { EventGenerator.time(seconds * 1000) }

    @Test func readAtIsWhenTheReadWatermarkPassedTheMessageNotItsLastMove() throws {
        var s = channel()
        s.read(cid, "bob", "m1", at: Self.at(100))
        s.read(cid, "bob", "m3", at: Self.at(300))
        #expect(try entries(list(s, "read", "m1")) == ["bob": .string(Self.at(100))])
        #expect(try entries(list(s, "read", "m2")) == ["bob": .string(Self.at(300))])
        #expect(try entries(list(s, "read", "m3")) == ["bob": .string(Self.at(300))])
        #expect(try entries(list(s, "read", "m4")) == [:])
        // The readers list is ordered by the last move (`last_read`) and tells when it passed the message (`read_at`).
        let readers = try s.query("message_receipts", [("cid", .string(cid)), ("message_id", .string("m1")), ("viewer", .string("ann"))])
        #expect(readers["readers"] == .array([.object([
            (key: "user_id", value: .string("bob")), (key: "last_read", value: .string(Self.at(300))),
            (key: "read_at", value: .string(Self.at(100))),
        ])]))
        #expect(try names(list(s, "unread", "m1")) == ["cat"])
        #expect(try names(list(s, "unread", "m2")) == ["cat"])
        #expect(try names(list(s, "unread", "m4")) == ["bob", "cat"])
    }

    @Test func aMarkUnreadChangesNoListOthersSee() throws {
        var s = channel()
        s.read(cid, "bob", "m1", at: Self.at(100))
        s.read(cid, "bob", "m4", at: Self.at(400))
        s.markUnread(cid, "bob", "m3")  // his own badge only: to others he still read m4 at 400
        #expect(try entries(list(s, "read", "m1")) == ["bob": .string(Self.at(100))])
        #expect(try entries(list(s, "read", "m3")) == ["bob": .string(Self.at(400))])
        #expect(try names(list(s, "unread", "m3")) == ["cat"])
        s.markUnread(cid, "bob", "m1")
        #expect(try entries(list(s, "read", "m1")) == ["bob": .string(Self.at(100))])
        // Reading again moves his own watermark; the public one is already past: nothing new for others.
        s.read(cid, "bob", "m2", at: Self.at(500))
        #expect(try entries(list(s, "read", "m2")) == ["bob": .string(Self.at(400))])
        #expect(s.unread(cid, "bob") == 2)  // m3 and m4, by his own watermark
    }

    @Test func onlyTheLastThreeMovesForwardAreRemembered() throws {
        var s = channel()
        for (i, id) in ["m1", "m2", "m3", "m4"].enumerated() { s.read(cid, "bob", id, at: Self.at(100 * (i + 1))) }
        // m1's own move (100) is forgotten: the oldest remembered one (200) stands for it.
        #expect(try entries(list(s, "read", "m1")) == ["bob": .string(Self.at(200))])
        #expect(try entries(list(s, "read", "m2")) == ["bob": .string(Self.at(200))])
        #expect(try entries(list(s, "read", "m3")) == ["bob": .string(Self.at(300))])
        #expect(try entries(list(s, "read", "m4")) == ["bob": .string(Self.at(400))])
        #expect(Crossings.capacity == 3)
    }

    @Test func deliveredAtIsWhenTheDeliveredWatermarkPassedTheMessage() throws {
        var s = channel()
        s.delivered(cid, "bob", "m2", at: Self.at(100))
        s.read(cid, "bob", "m3", at: Self.at(200))  // read passes delivered: m3 delivered at 200
        s.delivered(cid, "cat", "m4", at: Self.at(300))
        let delivered = try list(s, "delivered", "m1")
        #expect(entries(delivered) == ["bob": .string(Self.at(100)), "cat": .string(Self.at(300))])
        #expect(try entries(list(s, "delivered", "m3")) == ["bob": .string(Self.at(200)), "cat": .string(Self.at(300))])
        #expect(try names(list(s, "undelivered", "m4")) == ["bob"])
        #expect(try names(list(s, "undelivered", "m3")) == [])
        #expect(delivered["delivered_count"] == num(2) && delivered["undelivered_member_count"] == num(0))
    }

    @Test func aMemberWhoJoinedAfterTheMessageIsNeitherAReaderNorUnread() throws {
        var s = channel()
        s.send(.memberAdded(cid: cid, userID: "dan"))
        #expect(try entries(list(s, "read", "m2")) == [:])
        #expect(try names(list(s, "unread", "m2")) == ["bob", "cat"])
        #expect(try entries(list(s, "delivered", "m2")) == [:])
        let counts = try list(s, "read", "m4")
        #expect(counts["read_count"] == num(0) && counts["unread_member_count"] == num(2))
        #expect(counts["delivered_count"] == num(0) && counts["undelivered_member_count"] == num(2))
        // The next message counts dan like everyone.
        s.message(cid, "m5", from: "ann")
        #expect(try names(list(s, "unread", "m5")) == ["bob", "cat", "dan"])
        // A member who left is in no list; back, they are where they were.
        s.send(.memberRemoved(cid: cid, userID: "cat"))
        #expect(try names(list(s, "unread", "m2")) == ["bob"])
        s.send(.memberAdded(cid: cid, userID: "cat"))
        #expect(try names(list(s, "unread", "m2")) == ["bob", "cat"])
    }

    @Test func theSenderIsInNoList() throws {
        let s = channel()
        for name in ReceiptList.allCases.map(\.rawValue) {
            #expect(try !names(list(s, name, "m1")).contains("ann"), "\(name)")
        }
    }

    @Test func pagesByUserIDConcatenateToTheWholeList() throws {
        let users = (0..<30).map { "u" + ($0 < 10 ? "0" : "") + String($0) }
        var s = channel(["ann"] + users)
        for (i, user) in users.enumerated() where i % 3 != 0 { s.read(cid, user, "m2") }
        for name in ReceiptList.allCases.map(\.rawValue) {
            let whole = try list(s, name, "m2", pageSize: 100)
            var cursor: JSONValue = .null
            var paged: [String] = []
            var pages = 0
            repeat {
                let reply = try list(s, name, "m2", pageSize: 7, cursor: cursor)
                #expect(names(reply).count <= 7)
                paged += names(reply)
                cursor = reply["next_cursor"] ?? .null
                if let text = cursor.stringValue { #expect(text == "u:" + (names(reply).last ?? "")) }
                pages += 1
            } while cursor != .null && pages < 10
            #expect(paged == names(whole), "\(name)")
            #expect(paged == paged.sorted(), "\(name)")
            #expect(whole["next_cursor"] == .null)
        }
        #expect(try names(list(s, "read", "m2", pageSize: 100)).count == 20)
        #expect(try names(list(s, "unread", "m2", pageSize: 100)).count == 10)
    }

    @Test func aBadListOrAnotherListsCursorIsABadRequest() {
        let s = channel()
        func error(_ params: [(String, JSONValue)]) -> QueryError? {
            let base: [(String, JSONValue)] = [("cid", .string(cid)), ("message_id", .string("m1")), ("viewer", .string("ann"))]
            return s.queryError("message_receipts", .object((base + params).map { (key: $0.0, value: $0.1) }))
        }
        #expect(error([("list", .string("readers"))])?.message == "params.list: must be read, delivered, unread or undelivered")
        #expect(error([("list", .number("1"))])?.code == "bad_request")
        // A list takes `u:` cursors, the readers `r` ones.
        #expect(error([("list", .string("read")), ("cursor", .string("r1.2"))])?.code == "bad_request")
        #expect(error([("cursor", .string("u:bob"))])?.code == "bad_request")
        #expect(error([("list", .string("read")), ("cursor", .string("u:bob"))]) == nil)
    }

    @Test func aMemberWhoMovedOnceKeepsNoHistory() {
        var s = Script()
        s.create(cid, ["ann", "bob", "cat"])
        s.message(cid, "m1", from: "ann")
        s.read(cid, "bob", "m1")
        // bob moved once (reading), ann and cat never (sending is not reading): nothing stored.
        #expect(s.reducer.channels[0].histories.isEmpty)
        s.message(cid, "m2", from: "ann")
        s.read(cid, "bob", "m2")
        #expect(s.reducer.channels[0].histories.count == 1)  // bob's second move
    }
}
