import EventBus
import EventBusSupervisor
import EventBusTesting
import Foundation
import Testing
import ZeroMQ

/// The privacy filters as real processes under the supervisor (docs/privacy.md "Rules").
@Suite(.serialized) struct PrivacyPipelineTests {
    static let cid = "messaging:general"

    static func ingress(_ n: Int, _ type: String, subject: String = cid, _ data: String) -> [UInt8] {
        Array(#"{"specversion":"1.0","id":"p\#(n)","source":"/test","type":"\#(type)","subject":"\#(subject)","time":"2026-11-22T03:10:00.123Z","data":\#(data)}"#.utf8)
    }

    /// A channel of ann, bob and cat with three messages from ann; bob turns read receipts off.
    static let setup: [[UInt8]] = [
        ingress(1, "channel.created", #"{"cid":"\#(cid)","members":["ann","bob","cat"]}"#),
        ingress(2, "message.new", #"{"cid":"\#(cid)","message":{"id":"m1","user_id":"ann","created_at":"2026-11-22T03:00:00.000Z"}}"#),
        ingress(3, "message.new", #"{"cid":"\#(cid)","message":{"id":"m2","user_id":"ann","created_at":"2026-11-22T03:00:01.000Z"}}"#),
        ingress(4, "user.updated", subject: "@bob", #"{"user":{"id":"bob","privacy_settings":{"read_receipts":{"enabled":false}}}}"#),
    ]

    /// Acks: bob's read is withheld, cat's read and bob's delivery are not.
    static let acks: [[UInt8]] = [
        ingress(10, "message.read", #"{"cid":"\#(cid)","user_id":"bob","message_id":"m1"}"#),
        ingress(11, "message.read", #"{"cid":"\#(cid)","user_id":"cat","message_id":"m1"}"#),
        ingress(12, "message.delivered", #"{"cid":"\#(cid)","user_id":"bob","message_id":"m2"}"#),
    ]

    static let filtered = [
        "out/\(cid)/message.new", "out/\(cid)/message.new",
        "out/@bob/notification.mark_read",
        "out/\(cid)/message.read", "out/@cat/notification.mark_read",
        "out/\(cid)/message.delivered",
    ]

    /// Reads `count` events of `prefix` from the start: (topic, event JSON).
    static func read(_ pipeline: SupervisedPipeline, _ prefix: String, count: Int, consumer: String) throws -> [(String, JSONValue)] {
        let socket = try pipeline.peer()
        defer { socket.close() }
        _ = try pipeline.call(socket, "CONSUME", [Array(consumer.utf8), Array("earliest".utf8), Array("1000".utf8), Array(prefix.utf8)])
        var events: [(String, JSONValue)] = []
        while events.count < count, let frames = try socket.receive() {
            guard frames.count == 6, frames[1] == Array("EVT".utf8) else { continue }
            events.append((String(decoding: frames[4], as: UTF8.self), try JSONParser.parse(frames[5])))
        }
        return events
    }

    static func query(_ pipeline: SupervisedPipeline, _ method: String, _ params: String) throws -> JSONValue {
        let socket = try pipeline.peer()
        defer { socket.close() }
        let reply = try pipeline.call(socket, "REQ", [Array("receipts".utf8), Array(#"{"method":"\#(method)","params":\#(params)}"#.utf8)])
        return try JSONParser.parse(reply.last ?? [])
    }

    static func stages(_ names: [String]) -> [PipelineStage] {
        names.map { SupervisedPipeline.plugin($0, executable: $0) }
    }

    /// A channel of 2,500 members with 128-character ids, paged through the
    /// reducer and both filters: each page's reply event, with its views, is
    /// far over `max_event_bytes`, and the broker takes it as a `reply`.
    @Test func wideChannelStatePagesThroughTheFiltersBeyondMaxEventBytes() async throws {
        let pipeline = try SupervisedPipeline(Self.stages(["receipt-reducer", "read-privacy", "delivery-privacy"]))
        try await pipeline.stopAfter {
            try await pipeline.waitUntilReady()
            let publisher = try pipeline.peer()
            defer { publisher.close() }
            let cid = "messaging:wide"
            let padding = String(repeating: "x", count: 123)
            let users = (0..<2_500).map { "w" + String(format: "%04d", ($0 * 7_919) % 2_500) + padding }
            var events = [
                Self.ingress(1, "channel.created", subject: cid, #"{"cid":"\#(cid)","members":["\#(users[0])"]}"#),
                Self.ingress(2, "message.new", subject: cid, #"{"cid":"\#(cid)","message":{"id":"m1","user_id":"\#(users[0])","created_at":"2026-11-22T03:00:00.000Z"}}"#),
            ]
            for (n, user) in users.dropFirst().enumerated() {
                events.append(Self.ingress(10 + n, "member.added", subject: cid, #"{"cid":"\#(cid)","user_id":"\#(user)"}"#))
            }
            let hidden = "w0042" + padding
            events.append(Self.ingress(5_000, "user.updated", subject: "@" + hidden, #"{"user":{"id":"\#(hidden)","privacy_settings":{"read_receipts":{"enabled":false}}}}"#))
            for start in stride(from: 0, to: events.count, by: 500) {
                let reply = try pipeline.call(publisher, "PUB", [Array("in".utf8)] + Array(events[start..<min(events.count, start + 500)]))
                #expect(String(decoding: reply[1], as: UTF8.self) == "OK")
            }

            let requester = try pipeline.peer()
            defer { requester.close() }
            var cursor = ""
            var seen: [String] = []
            var pages = 0
            repeat {
                let params = #"{"cid":"\#(cid)","viewer":"ann","page_size":1000\#(cursor.isEmpty ? "" : #","cursor":"\#(cursor)""#)}"#
                let reply = try pipeline.call(requester, "REQ", [Array("receipts".utf8), Array(#"{"method":"channel_state","params":\#(params)}"#.utf8)])
                guard String(decoding: reply[1], as: UTF8.self) == "OK", let body = reply.last else {
                    Issue.record("page \(pages): \(reply.map { String(decoding: $0.prefix(200), as: UTF8.self) })")
                    return
                }
                #expect(body.count > 65_536 || pages == 2, "page \(pages): \(body.count) bytes")
                let page = try JSONParser.parse(body)
                #expect(page["hidden_member_count"]?.int64Value == 1, "page \(pages)")
                guard case .array(let members)? = page["members"] else { Issue.record("no members"); return }
                for member in members {
                    let id = member["user_id"]?.stringValue ?? ""
                    seen.append(id)
                    #expect((member["last_read"] == nil) == (id == hidden), "\(id.prefix(5))")
                }
                pages += 1
                cursor = page["next_cursor"]?.stringValue ?? ""
            } while !cursor.isEmpty && pages < 5
            #expect(pages == 3)
            #expect(seen == users.sorted())
        }
    }

    @Test func defaultPipelineWithholdsHiddenReceiptsEndToEndAndAuditsThem() async throws {
        let pipeline = try SupervisedPipeline(Self.stages(["receipt-reducer", "read-privacy", "delivery-privacy"]))
        try await pipeline.stopAfter {
            try await pipeline.waitUntilReady()
            let publisher = try pipeline.peer()
            defer { publisher.close() }
            _ = try pipeline.call(publisher, "PUB", [Array("in".utf8)] + Self.setup + Self.acks)
            let out = try Self.read(pipeline, "out/", count: Self.filtered.count, consumer: "check-out")
            #expect(out.map(\.0) == Self.filtered)
            let audit = try Self.read(pipeline, "diag/", count: 1, consumer: "check-diag")
            #expect(audit.first?.0 == "diag/\(Self.cid)/receipt.suppressed")
            #expect(audit.first?.1["data"]?["reason"]?.stringValue == "user_setting")
            #expect(audit.first?.1["data"]?["policy"]?.stringValue == "read-privacy")
            let receipts = try Self.query(pipeline, "message_receipts", #"{"cid":"\#(Self.cid)","message_id":"m1","viewer":"ann"}"#)
            #expect(receipts["read_count"]?.int64Value == 1)
            #expect(receipts["hidden_member_count"]?.int64Value == 1)
            #expect(receipts["views"] == nil)
            let own = try Self.query(pipeline, "message_receipts", #"{"cid":"\#(Self.cid)","message_id":"m1","viewer":"bob"}"#)
            // bob read m1 with read receipts off: not even his own view counts it (docs/events.md rule 19).
            #expect(own["read_count"]?.int64Value == 1)
        }
    }

    @Test func aDownFilterHoldsEverythingBackUntilItIsBackThenAllArrivesInOrder() async throws {
        let pipeline = try SupervisedPipeline(Self.stages(["receipt-reducer", "read-privacy", "delivery-privacy"])) { config in
            config.initialBackoff = .seconds(4)
        }
        try await pipeline.stopAfter {
            try await pipeline.waitUntilReady()
            let publisher = try pipeline.peer()
            defer { publisher.close() }
            _ = try pipeline.call(publisher, "PUB", [Array("in".utf8)] + Self.setup)
            #expect(try Self.read(pipeline, "out/", count: 2, consumer: "before").count == 2)
            // `out` also logs the private settings and membership events (never delivered from it):
            // wait until every stage has acknowledged everything, then `out` holds all there is.
            let caughtUp = try await pipeline.waitForStats("the pipeline caught up with the setup") { stats in
                ["receipt-reducer", "read-privacy", "delivery-privacy"].allSatisfy {
                    SupervisedPipeline.consumer($0, in: stats)?["lag"]?.int64Value == 0
                }
            }
            let logged = try #require(caughtUp["stages"]?["out"]?.int64Value)
            let reduced = try #require(caughtUp["stages"]?["receipt-reducer"]?.int64Value)
            let pid = try #require(pipeline.supervisor.processIdentifier(of: "read-privacy"))
            kill(pid, SIGKILL)
            // Down: the supervisor saw the exit (it restarts only after its 4 s backoff).
            try await pipeline.waitForStats("read-privacy's consumer detached", seconds: 10) { _ in
                pipeline.supervisor.processIdentifier(of: "read-privacy") == nil
            }
            _ = try pipeline.call(publisher, "PUB", [Array("in".utf8)] + Self.acks)
            // Positive control: the acks went through the reducer (its stage grew and its consumer
            // caught up with them) while the filter after it is down ...
            let applied = try await pipeline.waitForStats("the reducer applied the acks") { stats in
                (stats["stages"]?["receipt-reducer"]?.int64Value ?? 0) > reduced
                    && SupervisedPipeline.consumer("receipt-reducer", in: stats)?["lag"]?.int64Value == 0
            }
            // ... and nothing of them had reached `out` then, with the filter down throughout
            // (still down after that STATS was taken; its backoff is 4 s).
            #expect(pipeline.supervisor.processIdentifier(of: "read-privacy") == nil, "the filter came back too early for this check")
            #expect(applied["stages"]?["out"]?.int64Value == logged)
            let out = try Self.read(pipeline, "out/", count: Self.filtered.count, consumer: "after")
            #expect(out.map(\.0) == Self.filtered)
        }
    }

    /// Without filters the reducer still withholds bob's read made with his read receipts off
    /// (docs/events.md rule 19) and audits it on `diag`: `out` is the same either way.
    @Test func withoutFiltersOnlyTheReducersRuleSuppressesAndVisibleReceiptsAreTheSame() async throws {
        var results: [[(String, JSONValue)]] = []
        var counts: [JSONValue] = []
        for names in [["receipt-reducer"], ["receipt-reducer", "read-privacy", "delivery-privacy"]] {
            let pipeline = try SupervisedPipeline(Self.stages(names))
            try await pipeline.stopAfter {
                try await pipeline.waitUntilReady()
                let publisher = try pipeline.peer()
                _ = try pipeline.call(publisher, "PUB", [Array("in".utf8)] + Self.setup + Self.acks)
                publisher.close()
                let out = try Self.read(pipeline, "out/", count: Self.filtered.count, consumer: "check")
                #expect(out.map(\.0) == Self.filtered)
                results.append(out)
                counts.append(try Self.query(pipeline, "message_receipts", #"{"cid":"\#(Self.cid)","message_id":"m2","viewer":"ann"}"#))
                if names.count == 1 { #expect(try pipeline.stats()["stages"]?["diag"]?.int64Value ?? 0 == 1) }
            }
        }
        // Events of users with receipts on are identical, byte for byte.
        let visible = { (events: [(String, JSONValue)]) in
            events.filter { $0.1["data"]?["user_id"]?.stringValue != "bob" || !$0.0.hasSuffix("message.read") }.map(\.1)
        }
        #expect(visible(results[0]) == visible(results[1]))
        // m2: only bob's delivery counts; nobody read it.
        #expect(counts[0]["delivered_count"] == counts[1]["delivered_count"])
        #expect(counts[0]["read_count"] == counts[1]["read_count"])
    }
}
