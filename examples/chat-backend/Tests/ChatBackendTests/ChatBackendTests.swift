import EventBus
import EventBusTesting
import Foundation
import Testing

/// examples/chat-backend against a real bus: a broker and the receipt pipeline under the
/// supervisor, HTTP calls in, the ingress events of docs/events.md on `in` and the reducer's answers out.
@Suite struct ChatBackendTests {
    static func pipeline() async throws -> SupervisedPipeline {
        let pipeline = try SupervisedPipeline(["receipt-reducer", "read-privacy", "delivery-privacy"].map { SupervisedPipeline.plugin($0, executable: $0) })
        try await pipeline.waitUntilReady()
        return pipeline
    }

    @Test func everyEndpointPublishesTheSpecEventAndTheQueriesAnswerFromTheReducer() async throws {
        let pipeline = try await Self.pipeline()
        try await pipeline.stopAfter {
            let api = try await ChatBackendHarness(endpoint: pipeline.supervisor.commandEndpoint)
            defer { api.stop() }
            let channel = "/channels/messaging:general"

            let created = try await api.call("POST", "/channels", #"{"cid":"messaging:general","members":["alice","bob"]}"#)
            #expect(created.status == 201)
            #expect(created.header("Access-Control-Allow-Origin") == "*")
            #expect(try await api.call("POST", channel + "/members", #"{"user_id":"carol"}"#).status == 200)
            #expect(try await api.call("POST", channel + "/members", #"{"user_id":"dave"}"#).status == 200)
            #expect(try await api.call("DELETE", channel + "/members/dave").status == 200)
            let first = try await api.call("POST", channel + "/messages", #"{"user_id":"alice","text":"hi"}"#)
            #expect(first.status == 201)
            let m1 = try #require(first.json?["message"]?["id"]?.stringValue)
            let createdAt = try #require(first.json?["message"]?["created_at"]?.stringValue)
            #expect(Identifier.isValidTimestamp(createdAt))
            let second = try await api.call("POST", channel + "/messages", #"{"user_id":"alice","text":"lunch?","id":"m2"}"#)
            #expect(second.status == 201)
            #expect(second.json?["message"]?["id"]?.stringValue == "m2")
            let secondAt = try #require(second.json?["message"]?["created_at"]?.stringValue)
            let listed = try await api.call("GET", channel + "/messages")
            #expect(listed.json?["messages"] == .array([
                .of(#"{"created_at":"\#(createdAt)","id":"\#(m1)","text":"hi","user_id":"alice"}"#),
                .of(#"{"created_at":"\#(secondAt)","id":"m2","text":"lunch?","user_id":"alice"}"#),
            ]))
            // A cid percent-encoded in the path (as a browser's encodeURIComponent writes it) is the same channel.
            #expect(try await api.call("GET", "/channels/messaging%3Ageneral/messages").json?["messages"] == listed.json?["messages"])
            #expect(try await api.call("POST", channel + "/delivered", #"{"user_id":"bob","message_id":"m2"}"#).status == 200)
            #expect(try await api.call("POST", channel + "/read", #"{"user_id":"bob","message_id":"\#(m1)"}"#).status == 200)
            #expect(try await api.call("POST", channel + "/unread", #"{"user_id":"bob","message_id":"\#(m1)"}"#).status == 200)
            #expect(try await api.call("POST", channel + "/read", #"{"user_id":"carol"}"#).status == 200)

            // Before carol's privacy change, alice sees carol's read of m2.
            let before = try await api.call("GET", channel + "/messages/m2/receipts?viewer=alice")
            #expect(before.status == 200)
            #expect(before.json?["read_count"]?.int64Value == 1)
            #expect(Self.readers(before) == ["carol"])

            let privacy = try await api.call("PUT", "/users/carol/privacy", #"{"read_receipts":false}"#)
            #expect(privacy.status == 200)
            let delete = try await api.call("DELETE", channel + "/messages/" + m1)
            #expect(delete.status == 200)

            // Every mutating call answered with the SEQ of the one event it published on `in`.
            let events = try await ChatBackendHarness.ingress(api.bus, prefixes: ["in/messaging:general/", "in/@carol/"], count: 12)
            let expected: [(String, String, String)] = [
                ("channel.created", "messaging:general", #"{"cid":"messaging:general","members":["alice","bob"]}"#),
                ("member.added", "messaging:general", #"{"cid":"messaging:general","user_id":"carol"}"#),
                ("member.added", "messaging:general", #"{"cid":"messaging:general","user_id":"dave"}"#),
                ("member.removed", "messaging:general", #"{"cid":"messaging:general","user_id":"dave"}"#),
                ("message.new", "messaging:general", #"{"cid":"messaging:general","message":{"id":"\#(m1)","user_id":"alice","created_at":"\#(createdAt)","text":"hi"}}"#),
                ("message.new", "messaging:general", #"{"cid":"messaging:general","message":{"id":"m2","user_id":"alice","created_at":"\#(secondAt)","text":"lunch?"}}"#),
                ("message.delivered", "messaging:general", #"{"cid":"messaging:general","user_id":"bob","message_id":"m2"}"#),
                ("message.read", "messaging:general", #"{"cid":"messaging:general","user_id":"bob","message_id":"\#(m1)"}"#),
                ("notification.mark_unread", "messaging:general", #"{"cid":"messaging:general","user_id":"bob","message_id":"\#(m1)"}"#),
                ("notification.mark_read", "messaging:general", #"{"cid":"messaging:general","user_id":"carol"}"#),
                ("user.updated", "@carol", #"{"user":{"id":"carol","privacy_settings":{"read_receipts":{"enabled":false}}}}"#),
                ("message.deleted", "messaging:general", #"{"cid":"messaging:general","message_id":"\#(m1)"}"#),
            ]
            try #require(events.count == expected.count, "events on in: \(events)")
            for (event, (type, subject, data)) in zip(events, expected) {
                #expect(event["type"] as? String == type)
                #expect(event["subject"] as? String == subject)
                #expect(event["source"] as? String == "/chat-backend")
                #expect(ChatBackendHarness.same(event["data"], data), "\(type): \(event["data"] ?? "none") is not \(data)")
            }
            #expect(created.seq != nil && created.seq! < delete.seq!)  // both checked non-nil first

            // The reducer's results through the query endpoints.
            let bob = try await api.call("GET", "/users/bob/unread")
            #expect(bob.status == 200)
            #expect(bob.json?["total_unread_count"]?.int64Value == 1)  // m2: m1 is deleted
            let unreadHere = bob.json?["channels"]?.first
            #expect(unreadHere?["cid"]?.stringValue == "messaging:general")
            #expect(unreadHere?["unread_messages"]?.int64Value == 1)
            #expect(unreadHere?["first_unread_message_id"]?.stringValue == "m2")
            let carol = try await api.call("GET", "/users/carol/unread")
            #expect(carol.json?["total_unread_count"]?.int64Value == 0)

            // After the privacy change, carol's read is hidden from alice but not from carol.
            let after = try await api.call("GET", channel + "/messages/m2/receipts?viewer=alice")
            #expect(Self.readers(after) == [])
            #expect(after.json?["hidden_member_count"]?.int64Value == 1)
            let own = try await api.call("GET", channel + "/messages/m2/receipts?viewer=carol")
            #expect(Self.readers(own) == ["carol"])

            let state = try await api.call("GET", channel + "/state?viewer=alice&page_size=2")
            #expect(state.status == 200)
            let members = state.json?["members"]
            #expect(members?.userIDs == ["alice", "bob"])
            #expect(state.json?["next_cursor"]?.stringValue != nil)
            let next = try await api.call("GET", channel + "/state?viewer=alice&page_size=2&cursor=\(state.json?["next_cursor"]?.stringValue ?? "")")
            #expect(next.json?["members"]?.userIDs == ["carol"])
            #expect(next.json?["members"]?.first?["last_read"] == nil, "carol's read is hidden from alice")
            #expect(next.json?["members"]?.first?["last_delivered_message_id"] != nil)

            #expect(try await api.call("GET", "/health").json?["bus"]?.stringValue == "up")
            let unknown = try await api.call("GET", channel + "/messages/nope/receipts?viewer=alice")
            #expect(unknown.status == 404)
            // A param the receipts service refuses is a 400 naming the request's parameter.
            let tooLarge = try await api.call("GET", channel + "/state?viewer=alice&page_size=5000")
            #expect(tooLarge.status == 400)
            #expect(tooLarge.errorField == "page_size", "\(String(describing: tooLarge.json))")
        }
    }

    @Test func aThreadReplyAndAMutePublishTheirEventsAndShowInTheCounts() async throws {
        let pipeline = try await Self.pipeline()
        try await pipeline.stopAfter {
            let api = try await ChatBackendHarness(endpoint: pipeline.supervisor.commandEndpoint)
            defer { api.stop() }
            let channel = "/channels/messaging:threads"
            #expect(try await api.call("POST", "/channels", #"{"cid":"messaging:threads","members":["alice","bob"]}"#).status == 201)
            #expect(try await api.call("POST", channel + "/messages", #"{"user_id":"alice","text":"where?","id":"p1"}"#).status == 201)
            let reply = try await api.call("POST", channel + "/messages", #"{"user_id":"bob","text":"here","id":"r1","parent_id":"p1"}"#)
            #expect(reply.status == 201)
            #expect(reply.json?["message"]?["parent_id"]?.stringValue == "p1")
            #expect(reply.json?["message"]?["show_in_channel"] == .bool(false))
            // alice wrote the parent: the reply is unread for her in its thread, not in the channel.
            let alice = try await api.call("GET", "/users/alice/unread")
            let row = alice.json?["channels"]?.first
            #expect(row?["unread_messages"]?.int64Value == 0)
            #expect(row?["unread_threads"]?.int64Value == 1)
            #expect(row?["unread_thread_parent_ids"] == .array([.string("p1")]))

            // bob mutes the channel: alice's message stays unread in it, out of his totals.
            #expect(try await api.call("PUT", channel + "/members/bob/settings", #"{"muted":true}"#).status == 200)
            let bob = try await api.call("GET", "/users/bob/unread")
            #expect(bob.json?["total_unread_count"]?.int64Value == 0)
            #expect(bob.json?["channels"]?.first?["unread_messages"]?.int64Value == 1)
            #expect(bob.json?["channels"]?.first?["muted"] == .bool(true))

            let events = try await ChatBackendHarness.ingress(api.bus, prefixes: ["in/messaging:threads/"], count: 4)
            try #require(events.count == 4, "events on in: \(events)")
            #expect(events[2]["type"] as? String == "message.new")
            #expect(ChatBackendHarness.same(events[2]["data"], #"{"cid":"messaging:threads","message":{"id":"r1","user_id":"bob","created_at":"\#(reply.json?["message"]?["created_at"]?.stringValue ?? "")","text":"here","parent_id":"p1","show_in_channel":false}}"#))
            #expect(events[3]["type"] as? String == "member.updated")
            #expect(ChatBackendHarness.same(events[3]["data"], #"{"cid":"messaging:threads","user_id":"bob","muted":true}"#))
        }
    }

    @Test func anIdempotencyKeyRetryPublishesOnce() async throws {
        let pipeline = try await Self.pipeline()
        try await pipeline.stopAfter {
            let api = try await ChatBackendHarness(endpoint: pipeline.supervisor.commandEndpoint)
            defer { api.stop() }
            let body = #"{"cid":"messaging:retry","members":["alice","bob"]}"#
            let first = try await api.call("POST", "/channels", body, headers: ["Idempotency-Key": "create-1"])
            let retry = try await api.call("POST", "/channels", body, headers: ["Idempotency-Key": "create-1"])
            #expect(first.status == 201 && retry.status == 201)
            #expect(first.seq != nil && first.seq == retry.seq)
            let message = #"{"user_id":"alice","text":"once"}"#
            let sent = try await api.call("POST", "/channels/messaging:retry/messages", message, headers: ["Idempotency-Key": "8f14e45f"])
            let resent = try await api.call("POST", "/channels/messaging:retry/messages", message, headers: ["Idempotency-Key": "8f14e45f"])
            #expect(sent.seq != nil && sent.seq == resent.seq)
            #expect(sent.json?["message"] == resent.json?["message"])
            let other = try await api.call("POST", "/channels/messaging:retry/messages", message, headers: ["Idempotency-Key": "another"])
            #expect(other.seq != nil && other.seq != sent.seq)
            #expect(try await api.call("GET", "/channels/messaging:retry/messages").json?["messages"]?.count == 2)
            // Ask for a fourth event, which must not come: the retries appended nothing.
            let events = try await ChatBackendHarness.ingress(api.bus, prefixes: ["in/messaging:retry/"], count: 4, within: .seconds(3))
            #expect(events.map { $0["type"] as? String } == ["channel.created", "message.new", "message.new"])
        }
    }

    @Test func aBusThatIsDownGets503WithinTheTimeoutNeverAHang() async throws {
        let dead = "ipc://\(FileManager.default.temporaryDirectory.path)/no-broker-\(UUID().uuidString.prefix(8)).sock"
        let api = try await ChatBackendHarness(endpoint: dead, busTimeout: .seconds(1))
        defer { api.stop() }
        let started = ContinuousClock.now
        let reply = try await api.call("POST", "/channels", #"{"cid":"messaging:down","members":["alice"]}"#)
        let elapsed = ContinuousClock.now - started
        #expect(reply.status == 503)
        #expect(reply.json?["error"]?["message"]?.stringValue?.isEmpty == false)
        // Generous: a loaded CI machine runs many suites at once; a hang never ends.
        #expect(elapsed < .seconds(60), "a 1 s bus timeout answered after \(elapsed)")
        #expect(try await api.call("POST", "/channels/messaging:down/read", #"{"user_id":"alice"}"#).status == 503)
        #expect(try await api.call("GET", "/users/alice/unread").status == 503)
        let health = try await api.call("GET", "/health")
        #expect(health.status == 503 && health.json?["bus"]?.stringValue == "down")
    }

    /// Requests the backend refuses before the bus sees them: status and the field named.
    static let badRequests: [(method: String, path: String, body: String?, headers: [String: String], field: String)] = [
        ("POST", "/channels", #"{"members":[]}"#, [:], "cid"),
        ("POST", "/channels", #"{"cid":"general","members":[]}"#, [:], "cid"),
        ("POST", "/channels", #"{"cid":"messaging:g","members":["ok","@bad"]}"#, [:], "members[1]"),
        ("POST", "/channels", #"{"cid":"messaging:g","members":"alice"}"#, [:], "members"),
        ("POST", "/channels", "not json", [:], "body"),
        ("POST", "/channels/messaging:g/members", "{}", [:], "user_id"),
        ("POST", "/channels/nocolon/members", #"{"user_id":"carol"}"#, [:], "cid"),
        ("DELETE", "/channels/messaging:g/members/@carol", nil, [:], "user_id"),
        ("POST", "/channels/messaging:g/messages", #"{"user_id":"alice"}"#, [:], "text"),
        ("POST", "/channels/messaging:g/messages", #"{"user_id":"alice","text":""}"#, [:], "text"),
        ("POST", "/channels/messaging:g/messages", #"{"user_id":"alice","text":"x","type":"loud"}"#, [:], "type"),
        ("POST", "/channels/messaging:g/messages", #"{"user_id":"alice","text":"x","id":"bad id"}"#, [:], "id"),
        ("POST", "/channels/messaging:g/messages", #"{"user_id":"alice","text":"x","silent":"yes"}"#, [:], "silent"),
        ("POST", "/channels/messaging:g/messages", #"{"user_id":42,"text":"x"}"#, [:], "user_id"),
        ("POST", "/channels/messaging:g/delivered", #"{"user_id":"bob"}"#, [:], "message_id"),
        ("POST", "/channels/messaging:g/unread", #"{"user_id":"bob"}"#, [:], "message_id"),
        ("POST", "/channels/messaging:g/read", #"{"message_id":"m1"}"#, [:], "user_id"),
        ("POST", "/channels/messaging:g/read", #"{"user_id":"bob","message_id":"m 1"}"#, [:], "message_id"),
        ("POST", "/channels/messaging:g/messages", #"{"user_id":"alice","text":"x","parent_id":"bad id"}"#, [:], "parent_id"),
        ("POST", "/channels/messaging:g/messages", #"{"user_id":"alice","text":"x","show_in_channel":true}"#, [:], "show_in_channel"),
        ("PUT", "/channels/messaging:g/members/bob/settings", "{}", [:], "muted"),
        ("PUT", "/channels/messaging:g/members/bob/settings", #"{"count_unread":"loud"}"#, [:], "count_unread"),
        ("PUT", "/channels/messaging:g/members/bob/settings", #"{"muted":"yes"}"#, [:], "muted"),
        ("PUT", "/users/bob/privacy", "{}", [:], "read_receipts"),
        ("PUT", "/users/bob/privacy", #"{"read_receipts":"no"}"#, [:], "read_receipts"),
        ("GET", "/channels/messaging:g/state", nil, [:], "viewer"),
        ("GET", "/channels/messaging:g/messages/m1/receipts?viewer=alice&page_size=x", nil, [:], "page_size"),
        ("POST", "/channels", #"{"cid":"messaging:g","members":[]}"#, ["Idempotency-Key": "has space"], "Idempotency-Key"),
    ]

    @Test(arguments: 0..<badRequests.count)
    func aBadRequestGets400NamingTheField(_ index: Int) async throws {
        let (method, path, body, headers, field) = Self.badRequests[index]
        // No broker at all: a bad request never reaches the bus.
        let api = try await ChatBackendHarness(endpoint: "ipc://\(FileManager.default.temporaryDirectory.path)/none-\(UUID().uuidString.prefix(8)).sock")
        defer { api.stop() }
        let reply = try await api.call(method, path, body, headers: headers)
        #expect(reply.status == 400, "\(method) \(path) \(body ?? "")")
        #expect(reply.errorField == field, "\(method) \(path) \(body ?? ""): \(String(describing: reply.json))")
        #expect(reply.header("Access-Control-Allow-Origin") == "*")
    }

    @Test func unknownRoutesGet404AndPreflightsAreAnswered() async throws {
        let api = try await ChatBackendHarness(endpoint: "ipc://\(FileManager.default.temporaryDirectory.path)/none-\(UUID().uuidString.prefix(8)).sock")
        defer { api.stop() }
        let missing = try await api.call("GET", "/nope")
        #expect(missing.status == 404)
        #expect(missing.header("Access-Control-Allow-Origin") == "*")
        let preflight = try await api.call("OPTIONS", "/channels/messaging:g/messages", headers: [
            "Origin": "http://127.0.0.1:9999", "Access-Control-Request-Method": "POST",
        ])
        #expect(preflight.status == 204)
        #expect(preflight.header("Access-Control-Allow-Origin") == "*")
        #expect(preflight.header("Access-Control-Allow-Methods")?.contains("POST") == true)
        #expect(preflight.header("Access-Control-Allow-Headers")?.contains("Idempotency-Key") == true)
    }

    static func readers(_ reply: ChatBackendHarness.Reply) -> [String]? {
        reply.json?["readers"]?.userIDs
    }
}

extension JSONValue {
    /// The `user_id`s of an array of objects.
    var userIDs: [String]? {
        guard case .array(let entries) = self else { return nil }
        return entries.compactMap { $0["user_id"]?.stringValue }
    }

    var first: JSONValue? {
        guard case .array(let entries) = self else { return nil }
        return entries.first
    }

    var count: Int? {
        guard case .array(let entries) = self else { return nil }
        return entries.count
    }
}
