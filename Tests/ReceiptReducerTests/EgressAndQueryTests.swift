import EventBusCore
import ReceiptReducer
import Testing

/// The exact field sets of the egress events (docs/events.md) and the `receipts` queries' replies and errors.
@Suite struct EgressAndQueryTests {
    let cid = "messaging:general"

    func channel() -> Script {
        var s = Script()
        s.create(cid, ["ann", "bob", "cat"])
        s.message(cid, "m1", from: "ann")
        s.message(cid, "m2", from: "ann")
        return s
    }

    @Test func messageNewReemitsTheIngressData() throws {
        var s = channel()
        let data = try JSONParser.parse(Array(#"{"cid":"messaging:general","message":{"id":"m3","user_id":"ann","created_at":"2026-11-22T03:10:00.123Z","text":"hi"}}"#.utf8))
        let out = s.send(
            .messageNew(cid: cid, message: NewMessage(id: "m3", userID: "ann", createdAt: "2026-11-22T03:10:00.123Z")),
            data: data)
        #expect(out == [ReducerOutput(stage: "out", type: "message.new", subject: cid, data: data.serialized())])
    }

    @Test func messageDeletedReemitsTheIngressData() throws {
        var s = channel()
        let data = try JSONParser.parse(Array(#"{"cid":"messaging:general","message_id":"m1"}"#.utf8))
        let out = s.send(.messageDeleted(cid: cid, messageID: "m1"), data: data)
        #expect(out.first == ReducerOutput(stage: "out", type: "message.deleted", subject: cid, data: data.serialized()))
    }

    @Test func messageDeliveredHasExactlyItsFields() {
        var s = channel()
        let out = s.delivered(cid, "bob", "m2", at: "2026-11-22T04:00:00.000Z")
        #expect(out.count == 1)
        #expect(out[0].stage == "out")
        #expect(out[0].subject == cid)
        #expect(out[0].keys == ["cid", "user_id", "last_delivered_message_id", "last_delivered_at", "delivered_count"])
        #expect(out[0].json["last_delivered_message_id"] == .string("m2"))
        #expect(out[0].json["last_delivered_at"] == .string("2026-11-22T04:00:00.000Z"))
    }

    @Test func messageDeliveredWithoutTimeTakesTheEnvelopeTime() {
        var s = channel()
        let time = s.nextTime
        #expect(s.delivered(cid, "bob", "m1")[0].json["last_delivered_at"] == .string(time))
    }

    @Test func messageReadAndMarkReadHaveExactlyTheirFields() {
        var s = channel()
        let out = s.read(cid, "bob", "m1", at: "2026-11-22T04:00:00.000Z")
        #expect(out.map(\.type) == ["message.read", "notification.mark_read"])
        #expect(out[0].subject == cid)
        #expect(out[0].keys == ["cid", "user_id", "last_read_message_id", "last_read", "read_count", "delivered_count"])
        #expect(out[0].json["last_read"] == .string("2026-11-22T04:00:00.000Z"))
        #expect(out[1].subject == "@bob")
        #expect(
            out[1].keys == [
                "cid", "user_id", "last_read_message_id", "last_read", "unread_messages", "unread_mentions",
                "unread_channels", "total_unread_count", "total_unread_mentions",
            ])
        #expect(out[1].json["unread_messages"] == num(1))
    }

    @Test func markReadIngressEmitsMessageReadAndNotification() {
        var s = channel()
        let out = s.markRead(cid, "bob")
        #expect(out.map(\.type) == ["message.read", "notification.mark_read"])
        #expect(out[0].json["last_read_message_id"] == .string("m2"))
        #expect(out[1].json["unread_messages"] == num(0))
        #expect(out[1].json["total_unread_count"] == num(0))
    }

    @Test func markUnreadHasExactlyItsFields() {
        var s = channel()
        s.markRead(cid, "bob")
        let out = s.markUnread(cid, "bob", "m2")
        #expect(out[0].subject == "@bob")
        #expect(
            out[0].keys == [
                "cid", "user_id", "first_unread_message_id", "last_read_message_id", "last_read", "unread_messages",
                "unread_mentions", "unread_channels", "total_unread_count", "total_unread_mentions",
            ])
        #expect(out[0].json["first_unread_message_id"] == .string("m2"))
        #expect(out[0].json["last_read_message_id"] == .string("m1"))
        #expect(out[0].json["unread_messages"] == num(1))
        #expect(out[0].json["unread_channels"] == num(1))
    }

    // Queries

    @Test func channelStateListsEveryMemberSortedWithEveryField() throws {
        var s = channel()
        s.read(cid, "cat", "m1")
        let state = try s.query("channel_state", [("cid", .string(cid)), ("viewer", .string("bob"))])
        guard case .object(let top) = state, case .array(let members) = state["members"] else {
            Issue.record("bad reply"); return
        }
        #expect(top.map(\.key) == ["cid", "members", "hidden_member_count", "next_cursor"])
        #expect(members.map { $0["user_id"] } == [.string("ann"), .string("bob"), .string("cat")])
        guard case .object(let bob) = members[1] else { Issue.record("bad member"); return }
        #expect(
            bob.map(\.key) == [
                "user_id", "last_read", "last_read_message_id", "unread_messages", "last_delivered_at",
                "last_delivered_message_id",
            ])
        #expect(members[1]["last_read"] == .null)  // bob has read nothing yet
        #expect(members[1]["unread_messages"] == num(2))
        #expect(members[2]["last_read_message_id"] == .string("m1"))
        #expect(state["hidden_member_count"] == num(0))
    }

    @Test func unreadCountsForUnknownUserIsEmpty() throws {
        let s = channel()
        let counts = try s.query("unread_counts", [("user_id", .string("nobody"))])
        #expect(counts == .object([(key: "total_unread_count", value: num(0)), (key: "unread_channels", value: num(0)),
                                   (key: "total_unread_mentions", value: num(0)), (key: "channels", value: .array([]))]))
    }

    @Test func messageReceiptsCountsExcludeTheSender() throws {
        var s = channel()
        s.read(cid, "bob", "m2")
        s.delivered(cid, "cat", "m1")
        let r = try s.query("message_receipts", [("cid", .string(cid)), ("message_id", .string("m1")), ("viewer", .string("ann"))])
        guard case .object(let top) = r else { Issue.record("bad reply"); return }
        #expect(
            top.map(\.key) == [
                "read_count", "delivered_count", "unread_member_count", "undelivered_member_count",
                "hidden_member_count", "readers", "next_cursor",
            ])
        #expect(r["read_count"] == num(1))
        #expect(r["delivered_count"] == num(2))
        #expect(r["unread_member_count"] == num(1))
        #expect(r["undelivered_member_count"] == num(0))
        #expect(r["next_cursor"] == .null)
    }

    static let badRequests: [(String, String, String)] = [
        ("frobnicate", #"{"cid":"messaging:general"}"#, "method"),
        ("channel_state", #"[]"#, "params"),
        ("channel_state", #"{"viewer":"ann"}"#, "params.cid"),
        ("channel_state", #"{"cid":"nocolon","viewer":"ann"}"#, "params.cid"),
        ("channel_state", #"{"cid":"messaging:general"}"#, "params.viewer"),
        ("unread_counts", #"{}"#, "params.user_id"),
        ("unread_counts", #"{"user_id":7}"#, "params.user_id"),
        ("message_receipts", #"{"cid":"messaging:general","viewer":"ann"}"#, "params.message_id"),
        ("message_receipts", #"{"cid":"messaging:general","message_id":"m1","viewer":"ann","page_size":0}"#, "params.page_size"),
        ("message_receipts", #"{"cid":"messaging:general","message_id":"m1","viewer":"ann","page_size":101}"#, "params.page_size"),
        ("message_receipts", #"{"cid":"messaging:general","message_id":"m1","viewer":"ann","page_size":"5"}"#, "params.page_size"),
        ("message_receipts", #"{"cid":"messaging:general","message_id":"m1","viewer":"ann","cursor":"garbage"}"#, "params.cursor"),
    ]

    @Test(arguments: badRequests)
    func badParamIsBadRequestNamingIt(method: String, params: String, param: String) throws {
        let s = channel()
        let error = s.queryError(method, try JSONParser.parse(Array(params.utf8)))
        #expect(error?.code == "bad_request")
        #expect(error?.message.hasPrefix(param + ":") == true, "\(error?.message ?? "no error")")
    }

    static let notFounds: [(String, String)] = [
        ("channel_state", #"{"cid":"messaging:nowhere","viewer":"ann"}"#),
        ("message_receipts", #"{"cid":"messaging:nowhere","message_id":"m1","viewer":"ann"}"#),
        ("message_receipts", #"{"cid":"messaging:general","message_id":"m404","viewer":"ann"}"#),
    ]

    @Test(arguments: notFounds)
    func unknownChannelOrMessageIsNotFound(method: String, params: String) throws {
        let s = channel()
        #expect(s.queryError(method, try JSONParser.parse(Array(params.utf8)))?.code == "not_found")
    }

    // Snapshots

    @Test func snapshotRoundTripsAndContinuesIdentically() throws {
        var s = channel()
        s.read(cid, "bob", "m1", at: "not-a-bus-time")
        s.send(.messageDeleted(cid: cid, messageID: "m2"))
        s.read("messaging:nowhere", "bob", "m1")
        let bytes = s.reducer.encodeSnapshot()
        var restored = try ReceiptReducer(snapshot: bytes)
        #expect(restored.encodeSnapshot() == bytes)
        #expect(restored.rejectedCount(.unknownChannel) == 1)
        let next = ReducerInput(seq: 99, time: "2026-11-22T09:00:00.000Z", payload: .notificationMarkRead(cid: cid, userID: "bob", readAt: nil))
        #expect(restored.apply(next) == s.reducer.apply(next))
    }

    @Test func snapshotRejectsForeignAndDamagedBytes() throws {
        let bytes = channel().reducer.encodeSnapshot()
        #expect(throws: SnapshotError.self) { try ReceiptReducer(snapshot: []) }
        #expect(throws: SnapshotError.self) { try ReceiptReducer(snapshot: Array("hello".utf8)) }
        var future = bytes
        future[3] = bytes[3] + 1
        #expect(throws: SnapshotError.self) { try ReceiptReducer(snapshot: future) }
        #expect(throws: SnapshotError.self) { try ReceiptReducer(snapshot: Array(bytes.dropLast())) }
        #expect(throws: SnapshotError.self) { try ReceiptReducer(snapshot: bytes + [0]) }
    }
}
