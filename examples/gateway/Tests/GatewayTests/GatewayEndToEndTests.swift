import EventBus
import EventBusTesting
import Foundation
import Testing

/// The gateway process against a real broker and the default pipeline (reducer and both privacy filters).
@Suite(.serialized) struct GatewayEndToEndTests {
    static let stages = ["receipt-reducer", "read-privacy", "delivery-privacy"].map { SupervisedPipeline.plugin($0, executable: $0) }

    static func event(_ id: String, _ type: String, subject: String, data: String) -> [UInt8] {
        Array(#"{"specversion":"1.0","id":"\#(id)","source":"/test","type":"\#(type)","subject":"\#(subject)","time":"2026-11-22T03:10:00.000Z","data":\#(data)}"#.utf8)
    }

    static func channel(_ cid: String, _ members: [String]) -> [UInt8] {
        event("create-\(cid)", "channel.created", subject: cid, data: #"{"cid":"\#(cid)","members":[\#(members.map { "\"\($0)\"" }.joined(separator: ","))]}"#)
    }

    static func message(_ id: String, from user: String, in cid: String = "messaging:general") -> [UInt8] {
        event("new-\(id)", "message.new", subject: cid,
              data: #"{"cid":"\#(cid)","message":{"id":"\#(id)","user_id":"\#(user)","created_at":"2026-11-22T03:10:00.000Z","text":"hi"}}"#)
    }

    static func ack(_ type: String, _ user: String, _ message: String, in cid: String = "messaging:general") -> [UInt8] {
        event("\(type)-\(user)-\(message)", type, subject: cid, data: #"{"cid":"\#(cid)","user_id":"\#(user)","message_id":"\#(message)"}"#)
    }

    /// Two users with two devices each and a non-member: each device gets exactly the
    /// frames docs/events.md ("Egress events") prescribes for its user; a kill -9 of the gateway loses nothing for
    /// a device that reconnects with its last SEQ; a device replaying from 0 gets the same.
    @Test func routesByMembershipAndUserAndSurvivesAKill() async throws {
        let pipeline = try SupervisedPipeline(Self.stages)
        try await pipeline.stopAfter {
            try await pipeline.waitUntilReady()
            let client = try BusClient(options: .init(endpoint: pipeline.supervisor.commandEndpoint, name: "test"))
            defer { client.close() }
            _ = try await client.publish([Self.channel("messaging:general", ["alice", "bob"]), Self.channel("messaging:other", ["carol"])])

            let gateway = try GatewayProcess(busEndpoint: pipeline.supervisor.commandEndpoint)
            try await gateway.start()
            let alice1 = WebSocketRecorder(url: gateway.webSocketURL + "?user_id=alice")
            let alice2 = WebSocketRecorder(url: gateway.webSocketURL + "?user_id=alice")
            let bob1 = WebSocketRecorder(url: gateway.webSocketURL + "?user_id=bob")
            let bob2 = WebSocketRecorder(url: gateway.webSocketURL + "?user_id=bob")
            let carol = WebSocketRecorder(url: gateway.webSocketURL + "?user_id=carol")
            for recorder in [alice1, alice2, bob1, bob2, carol] { try await recorder.start() }

            _ = try await client.publish([
                Self.message("m1", from: "alice"),
                Self.ack("message.delivered", "bob", "m1"),
                Self.ack("message.read", "bob", "m1"),
                Self.message("c1", from: "carol", in: "messaging:other"),
            ])
            let channelTypes = ["message.new", "message.delivered", "message.read"]
            for alice in [alice1, alice2] {
                let frames = try await alice.waitFor(3)
                #expect(frames.map(\.type) == channelTypes)
                #expect(frames.allSatisfy { $0.topic.hasPrefix("out/messaging:general/") })
            }
            for bob in [bob1, bob2] {
                let frames = try await bob.waitFor(4)
                #expect(frames.map(\.type) == channelTypes + ["notification.mark_read"])
                #expect(frames.last?.topic == "out/@bob/notification.mark_read")
            }
            let carolFrames = try await carol.waitFor(1)
            #expect(carolFrames.map(\.topic) == ["out/messaging:other/message.new"])
            // Nothing more arrives for anyone (the @bob notification and the other channel stay where
            // they belong). Positive control, not a wait for nothing: markers published after them
            // reach every device, and each device got nothing else before its marker.
            _ = try await client.publish([
                Self.message("marker-1", from: "alice"),
                Self.message("marker-2", from: "carol", in: "messaging:other"),
            ])
            for alice in [alice1, alice2] {
                let frames = try await alice.waitFor(4)
                #expect(frames.last?.text.contains("marker-1") == true)
            }
            for bob in [bob1, bob2] {
                let frames = try await bob.waitFor(5)
                #expect(frames.last?.text.contains("marker-1") == true)
            }
            #expect(try await carol.waitFor(2).last?.text.contains("marker-2") == true)
            #expect(alice1.frames.count == 4 && alice2.frames.count == 4 && carol.frames.count == 2)
            #expect(bob1.frames.map(\.seq) == bob2.frames.map(\.seq))
            let aliceSeen = try #require(alice1.frames.last?.seq)

            // kill -9; events published while the gateway is down.
            try await gateway.kill()
            for recorder in [alice1, alice2, bob1, bob2, carol] { await recorder.stop() }
            _ = try await client.publish([
                Self.message("m2", from: "bob"),
                Self.ack("message.read", "alice", "m2"),
            ])
            try await gateway.start()
            let alice1Again = WebSocketRecorder(url: gateway.webSocketURL + "?user_id=alice&last_seq=\(aliceSeen)")
            try await alice1Again.start()
            _ = try await client.publish(Self.message("m3", from: "alice"))
            let missed = try await alice1Again.waitFor(4)
            #expect(missed.map(\.type) == ["message.new", "message.read", "notification.mark_read", "message.new"])
            #expect(missed.allSatisfy { $0.seq > aliceSeen })
            #expect(missed.map(\.seq) == missed.map(\.seq).sorted())
            #expect(Set(missed.map(\.seq)).count == missed.count)

            // A device replaying from 0 gets the whole history: exactly what device 1 saw, in order.
            let alice3 = WebSocketRecorder(url: gateway.webSocketURL + "?user_id=alice&last_seq=0")
            try await alice3.start()
            let history = alice1.frames + missed
            let replayed = try await alice3.waitFor(history.count)
            #expect(replayed.map(\.seq) == history.map(\.seq))
            #expect(replayed.map(\.text) == history.map(\.text))
            // Nothing more for either device: a marker published now is the next thing each gets.
            _ = try await client.publish(Self.message("marker-3", from: "bob"))
            #expect(try await alice1Again.waitFor(5).last?.text.contains("marker-3") == true)
            #expect(try await alice3.waitFor(history.count + 1).last?.text.contains("marker-3") == true)
            #expect(alice1Again.frames.count == 5 && alice3.frames.count == history.count + 1)
            await alice1Again.stop()
            await alice3.stop()
        }
    }

    /// A client that stops reading is closed with code 4008 once its bounded queue is
    /// full, while a client that reads gets every event.
    @Test func stalledClientIsClosedWithACode() async throws {
        let pipeline = try SupervisedPipeline(Self.stages)
        try await pipeline.stopAfter {
            try await pipeline.waitUntilReady()
            let client = try BusClient(options: .init(endpoint: pipeline.supervisor.commandEndpoint, name: "test"))
            defer { client.close() }
            _ = try await client.publish(Self.channel("messaging:general", ["alice", "bob"]))
            let gateway = try GatewayProcess(busEndpoint: pipeline.supervisor.commandEndpoint, queueLimit: 64)
            try await gateway.start()
            let stalled = try StalledSocket(port: gateway.port, path: "/ws?user_id=bob")
            let reader = WebSocketRecorder(url: gateway.webSocketURL + "?user_id=alice")
            try await reader.start()
            // 25 batches of 20 messages of 8 KiB: far more than the socket buffers and 64 frames hold.
            let text = String(repeating: "x", count: 8192)
            for batch in 0..<25 {
                let events = (0..<20).map { n -> [UInt8] in
                    let id = "p\(batch)-\(n)"
                    return Self.event("new-\(id)", "message.new", subject: "messaging:general",
                                      data: #"{"cid":"messaging:general","message":{"id":"\#(id)","user_id":"alice","created_at":"2026-11-22T03:10:00.000Z","text":"\#(text)"}}"#)
                }
                _ = try await client.publish(events)
                // The reader keeps up: its queue never fills.
                try await reader.waitFor((batch + 1) * 20, seconds: 30)
            }
            #expect(reader.frames.count == 500)
            #expect(reader.frames.map(\.seq) == reader.frames.map(\.seq).sorted())
            #expect(!reader.finished)
            #expect(stalled.drainCloseCode() == 4008)
            await reader.stop()
        }
    }
}
