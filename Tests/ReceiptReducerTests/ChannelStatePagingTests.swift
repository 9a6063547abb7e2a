import EventBusCore
import ReceiptReducer
import Testing

/// `channel_state` pages: `page_size` (1–1000, default 1000) members sorted by
/// user id after `cursor`, `next_cursor` null at the end.
@Suite struct ChannelStatePagingTests {
    let cid = "team:paged"

    func obj(_ m: [(String, JSONValue)]) -> JSONValue { .object(m.map { (key: $0.0, value: $0.1) }) }

    func params(viewer: String = "v", pageSize: Int? = nil, cursor: JSONValue = .null) -> [(String, JSONValue)] {
        var params: [(String, JSONValue)] = [("cid", .string(cid)), ("viewer", .string(viewer))]
        if let pageSize { params.append(("page_size", num(pageSize))) }
        if cursor != .null { params.append(("cursor", cursor)) }
        return params
    }

    func names(_ reply: JSONValue) -> [String] {
        guard case .array(let members)? = reply["members"] else { return [] }
        return members.compactMap { $0["user_id"]?.stringValue }
    }

    @Test func channelStatePagesThroughEveryMemberInUserIDOrder() throws {
        var s = Script()
        let users = (0..<23).map { "p\(($0 * 7) % 23 + 10)" }  // p10…p32, joined out of order
        s.create(cid, users)
        s.message(cid, "m1", from: "p10")
        var pages: [[String]] = []
        var cursor: JSONValue = .null
        repeat {
            let reply = try s.query("channel_state", params(pageSize: 5, cursor: cursor))
            pages.append(names(reply))
            cursor = reply["next_cursor"] ?? .null
            if cursor != .null {
                #expect(cursor == .string("u:" + (names(reply).last ?? "")), "the cursor names the last member")
            }
        } while cursor != .null && pages.count < 10
        #expect(pages.map(\.count) == [5, 5, 5, 5, 3])
        #expect(pages.flatMap { $0 } == users.sorted())
        // The default page holds them all, with a null cursor.
        let whole = try s.query("channel_state", params())
        #expect(names(whole) == users.sorted())
        #expect(whole["next_cursor"] == .null)
        guard case .object(let top) = whole else { Issue.record("bad reply"); return }
        #expect(top.map(\.key) == ["cid", "members", "hidden_member_count", "next_cursor"])
        // A page that ends exactly at the last member has no next page.
        let exact = try s.query("channel_state", params(pageSize: 3, cursor: .string("u:p29")))
        #expect(names(exact) == ["p30", "p31", "p32"])
        #expect(exact["next_cursor"] == .null)
    }

    @Test func channelStatePagingIsStableWhenMembersJoinAndLeaveBetweenPages() throws {
        var s = Script()
        s.create(cid, ["b", "d", "f", "h", "j"])
        let first = try s.query("channel_state", params(pageSize: 2))
        #expect(names(first) == ["b", "d"])
        s.send(.memberAdded(cid: cid, userID: "a"))  // before the cursor: not on a later page
        s.send(.memberRemoved(cid: cid, userID: "d"))  // the cursor's own member leaves: the cursor still holds
        s.send(.memberRemoved(cid: cid, userID: "f"))  // after the cursor: gone from the next page
        s.send(.memberAdded(cid: cid, userID: "g"))  // after the cursor: on the next page
        let second = try s.query("channel_state", params(pageSize: 2, cursor: first["next_cursor"] ?? .null))
        #expect(names(second) == ["g", "h"])
        let third = try s.query("channel_state", params(pageSize: 2, cursor: second["next_cursor"] ?? .null))
        #expect(names(third) == ["j"])
        #expect(third["next_cursor"] == .null)
    }

    @Test func everyViewCoversTheSamePageAndCountsTheMembersHiddenOnTheWholeChannel() throws {
        var s = Script()
        s.create(cid, ["a", "b", "c", "d", "e", "f"])
        s.message(cid, "m1", from: "a")
        s.send(.userUpdated(userID: "b", deliveryReceipts: nil, readReceipts: false))
        s.send(.userUpdated(userID: "e", deliveryReceipts: false, readReceipts: nil))
        // The page d, e, f hides e's delivery only, yet every view counts b as well.
        let answer = try s.reducer.answer(method: "channel_state", params: obj(params(pageSize: 3, cursor: .string("u:c"))))
        let full = try JSONParser.parse(answer.result)
        #expect(names(full) == ["d", "e", "f"])
        #expect(full["hidden_member_count"] == num(0))
        var views: [String: JSONValue] = [:]
        for view in answer.views ?? [] { views[view.key] = try JSONParser.parse(view.result) }
        #expect(views.keys.sorted() == ["delivery", "read", "read+delivery"])
        for (key, view) in views {
            #expect(names(view) == ["d", "e", "f"], "\(key)")
            #expect(view["next_cursor"] == .null, "\(key)")
        }
        #expect(views["read"]?["hidden_member_count"] == num(1))  // b, on the first page
        #expect(views["read"]?["members"] == full["members"])  // nobody on this page hides a read
        #expect(views["delivery"]?["hidden_member_count"] == num(1))
        #expect(views["read+delivery"]?["hidden_member_count"] == num(2))
    }

    static let badPages: [(String, String)] = [
        (#"{"cid":"team:paged","viewer":"v","page_size":0}"#, "params.page_size"),
        (#"{"cid":"team:paged","viewer":"v","page_size":1001}"#, "params.page_size"),
        (#"{"cid":"team:paged","viewer":"v","page_size":"5"}"#, "params.page_size"),
        (#"{"cid":"team:paged","viewer":"v","page_size":2.5}"#, "params.page_size"),
        (#"{"cid":"team:paged","viewer":"v","cursor":"garbage"}"#, "params.cursor"),
        (#"{"cid":"team:paged","viewer":"v","cursor":"u:"}"#, "params.cursor"),
        (#"{"cid":"team:paged","viewer":"v","cursor":"r-1:ann"}"#, "params.cursor"),
        (#"{"cid":"team:paged","viewer":"v","cursor":7}"#, "params.cursor"),
    ]

    @Test(arguments: badPages)
    func badPageSizeOrCursorIsBadRequestNamingIt(params: String, param: String) throws {
        var s = Script()
        s.create(cid, ["a"])
        let error = s.queryError("channel_state", try JSONParser.parse(Array(params.utf8)))
        #expect(error?.code == "bad_request")
        #expect(error?.message.hasPrefix(param + ":") == true, "\(error?.message ?? "no error")")
    }

    /// 100,000 members with the longest ids docs/events.md allows, read fields set, and
    /// the worst case for size: one member with read receipts off and one with
    /// delivery receipts off, so every page carries three views (a channel of
    /// more than two members has no reciprocity views) that hide almost nothing
    /// — four near-full copies of the page. Each reply's `data` stays under the
    /// 4 MiB PUB batch limit with room for the event's envelope.
    @Test func channelStateOf100000MembersIsPagedWithinTheEventLimit() throws {
        let count = 100_000
        let padding = String(repeating: "x", count: 121)
        func user(_ i: Int) -> String {
            let digits = String(i)
            return "u" + String(repeating: "0", count: 6 - digits.count) + digits + padding  // 128 characters
        }
        // A permutation (7919 is prime to 100,000), so members join out of order.
        let users = (0..<count).map { user(($0 &* 7919) % count) }
        let messageID = String(repeating: "m", count: 128)
        var s = Script()
        s.create(cid, [users[0]])
        s.message(cid, messageID, from: users[0])
        s.create(cid, users)  // the others join at the message, with a time
        s.send(.userUpdated(userID: user(4_242), deliveryReceipts: nil, readReceipts: false))
        s.send(.userUpdated(userID: user(77_777), deliveryReceipts: false, readReceipts: nil))

        var cursor: JSONValue = .null
        var pages = 0
        var seen: [String] = []
        var largest = 0
        repeat {
            let query = obj(params(viewer: user(1), pageSize: 1000, cursor: cursor))
            let answer = try s.reducer.answer(method: "channel_state", params: query)
            let data = answer.data
            largest = max(largest, data.count)
            #expect(data.count + 1024 <= WireProtocol.maxBatchBytes, "page \(pages): \(data.count) bytes")
            #expect(answer.views?.count == 3, "page \(pages)")
            let result = try JSONParser.parse(answer.result)
            let page = names(result)
            #expect(page.count == 1000, "page \(pages)")
            seen += page
            pages += 1
            cursor = result["next_cursor"] ?? .null
        } while cursor != .null && pages <= count / 1000
        #expect(pages == 100)
        #expect(seen == (0..<count).map(user))
        #expect(largest > WireProtocol.defaultMaxEventBytes, "the worst case does exceed max_event_bytes: \(largest)")
    }
}
