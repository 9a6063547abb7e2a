import EventBusCore
import ReceiptReducer
import Testing

/// Rule 7 (docs/events.md): no member cap; exact counts and paging at 100,000 members.
@Suite struct GroupReceiptTests {
    @Test func groupReceiptsAt100000Members() throws {
        let cid = "livestream:big"
        let members = (0..<100_000).map { "u" + String(100_000 + $0) }  // sortable: u100000…u199999
        var s = Script()
        s.create(cid, members)
        for i in 1...10 { s.message(cid, "m\(i)", from: members[0]) }
        // 30,000 read m5, 20,000 read m8 (of those, 5,000 then marked m8 unread: for their own badge
        // only, they stay readers to everyone else), 10,000 got m9 delivered.
        for i in 1..<30_001 { s.read(cid, members[i], "m5") }
        for i in 30_001..<50_001 { s.read(cid, members[i], "m8") }
        for i in 45_001..<50_001 { s.markUnread(cid, members[i], "m8") }  // back to m7
        for i in 50_001..<60_001 { s.delivered(cid, members[i], "m9") }
        s.send(.memberRemoved(cid: cid, userID: members[1]))

        func receipts(_ id: String, pageSize: Int = 100, cursor: JSONValue? = nil) throws -> JSONValue {
            var params: [(String, JSONValue)] = [
                ("cid", .string(cid)), ("message_id", .string(id)), ("viewer", .string(members[0])),
                ("page_size", num(pageSize)),
            ]
            if let cursor { params.append(("cursor", cursor)) }
            return try s.query("message_receipts", params)
        }
        // Others: 99,998 current members besides the sender.
        let m5 = try receipts("m5")
        #expect(m5["read_count"] == num(49_999))
        #expect(m5["unread_member_count"] == num(99_998 - 49_999))
        #expect(m5["delivered_count"] == num(59_999))
        let m8 = try receipts("m8")
        #expect(m8["read_count"] == num(20_000))
        #expect(m8["delivered_count"] == num(30_000))
        let m9 = try receipts("m9")
        #expect(m9["read_count"] == num(0))
        #expect(m9["delivered_count"] == num(10_000))
        #expect(m9["undelivered_member_count"] == num(89_998))

        // Page through all 20,000 readers of m8: newest first (they read in user id order, one
        // event time apart, so by user id descending), no repeats.
        var seen = 0
        var cursor: JSONValue?
        var last = "~"
        var inOrder = true
        while true {
            let page = try receipts("m8", cursor: cursor)
            guard case .array(let readers) = page["readers"] else { Issue.record("no readers"); return }
            for reader in readers {
                let id = reader["user_id"]?.stringValue ?? ""
                inOrder = inOrder && id < last
                last = id
            }
            seen += readers.count
            guard let next = page["next_cursor"], next != .null else { break }
            cursor = next
        }
        #expect(seen == 20_000)
        #expect(inOrder, "readers out of order")
        #expect(last == members[30_001])
        #expect(s.reducer.unreadMessages(cid: cid, userID: members[2]) == 5)
        #expect(s.reducer.unreadMessages(cid: cid, userID: members[45_001]) == 3)
    }
}
