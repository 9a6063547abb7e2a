import EventBus
import EventBusSupervisor
import EventBusTesting
import Foundation
import ReceiptReducer
import Testing
import ZeroMQ

/// The `receipt-reducer` process under the supervisor, checked against the pure fold.
@Suite(.serialized) struct ReducerProcessTests {
    static let cid = "messaging:team"
    static let members = (0..<20).map { "u\($0)" }

    static func envelope(_ id: String, _ type: String, _ subject: String, _ data: String, minute: Int = 0) -> [UInt8] {
        let time = String(format: "2026-11-22T03:%02d:%02d.%03dZ", minute / 60 % 60, minute % 60, minute % 1000)
        return Array(#"{"specversion":"1.0","id":"\#(id)","source":"/chat-api","type":"\#(type)","subject":"\#(subject)","time":"\#(time)","data":\#(data)}"#.utf8)
    }

    /// A group chat: the channel, 50 messages, then `acks` random reads and deliveries.
    static func script(acks: Int) -> [[UInt8]] {
        var events = [envelope("c", "channel.created", cid, #"{"cid":"\#(cid)","members":[\#(members.map { "\"\($0)\"" }.joined(separator: ","))]}"#)]
        for n in 0..<50 {
            events.append(envelope("m\(n)", "message.new", cid,
                                   #"{"cid":"\#(cid)","message":{"id":"m\#(n)","user_id":"\#(members[n % 20])","created_at":"2026-11-22T03:00:00.000Z"}}"#, minute: n))
        }
        var seed: UInt64 = 42
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        // Acks for random messages, in any order: many move nothing (older than the watermark).
        for n in 0..<acks {
            let user = members[next(20)], message = "m\(next(50))"
            let type = next(3) == 0 ? "message.delivered" : "message.read"
            events.append(envelope("a\(n)", type, cid, #"{"cid":"\#(cid)","user_id":"\#(user)","message_id":"\#(message)"}"#, minute: n % 3600))
        }
        return events
    }

    @Test func sigkilledReducerRestartsAndItsOutputEqualsTheFoldWithoutTheKill() async throws {
        let pipeline = try SupervisedPipeline([SupervisedPipeline.plugin("receipt-reducer", executable: "receipt-reducer", ["--batch", "100"])])
        try await pipeline.stopAfter {
            try await pipeline.waitUntilReady()
            let events = Self.script(acks: 2_000)
            let publisher = try pipeline.peer()
            var seqs: [UInt64] = []
            var killed = false
            for start in stride(from: 0, to: events.count, by: 50) {
                let batch = Array(events[start..<min(events.count, start + 50)])
                let reply = try pipeline.call(publisher, "PUB", [Array("in".utf8)] + batch)
                seqs += reply.dropFirst(3).compactMap { UInt64(String(decoding: $0, as: UTF8.self)) }
                if start == 1_000, let pid = pipeline.supervisor.processIdentifier(of: "receipt-reducer") {
                    kill(pid, SIGKILL)
                    killed = true
                }
            }
            #expect(killed)
            #expect(seqs.count == events.count)

            // The same inputs through the pure fold, in this process: a run without the kill.
            var reducer = ReceiptReducer()
            var expected: [String] = []
            var expectedDiag = 0
            for (event, seq) in zip(events, seqs) {
                let validated = try EventValidator.validate(event, stage: "in")
                let payload = try #require(validated.payload)
                for (n, output) in reducer.apply(ReducerInput(seq: seq, time: validated.envelope.time, payload: payload, data: validated.envelope.data)).enumerated() {
                    if output.stage == "out" { expected.append("receipt-reducer:\(seq):\(n)") } else { expectedDiag += 1 }
                }
            }
            let out = try pipeline.readIDs("out/", count: expected.count, consumer: "check-out")
            #expect(out == expected)
            let stats = try pipeline.stats()
            // Before any REQ (a reply is logged on `out` too); `out` also holds the
            // channel.created the reducer passed on, which its consumers never get.
            #expect(stats["stages"]?["out"]?.int64Value == Int64(expected.count + 1))
            #expect(stats["stages"]?["diag"]?.int64Value == Int64(expectedDiag))

            // channel_state from the restarted process equals the fold's.
            let requester = try pipeline.peer()
            let params = #"{"cid":"\#(Self.cid)","viewer":"u0"}"#
            let reply = try pipeline.call(requester, "REQ", [Array("receipts".utf8), Array(#"{"method":"channel_state","params":\#(params)}"#.utf8)])
            #expect(String(decoding: reply[1], as: UTF8.self) == "OK")
            let local = try reducer.query(method: "channel_state", params: try JSONParser.parse(Array(params.utf8)))
            #expect(try JSONParser.parse(reply.last ?? []) == JSONParser.parse(local))
        }
    }

    @Test func aQuerySeesEveryEventConfirmedBeforeIt() async throws {
        let pipeline = try SupervisedPipeline([SupervisedPipeline.plugin("receipt-reducer", executable: "receipt-reducer")])
        try await pipeline.stopAfter {
            try await pipeline.waitUntilReady()
            let peer = try pipeline.peer()
            _ = try pipeline.call(peer, "PUB", [Array("in".utf8)] + Array(Self.script(acks: 0).prefix(11)))  // the channel, m0…m9
            for n in 0..<10 {
                // bob reads m<n>; the very next request already counts it.
                let ack = Self.envelope("ryw\(n)", "message.read", Self.cid, #"{"cid":"\#(Self.cid)","user_id":"u1","message_id":"m\#(n)"}"#)
                #expect(try pipeline.call(peer, "PUB", [Array("in".utf8), ack])[1] == Array("OK".utf8))
                let reply = try pipeline.call(peer, "REQ", [Array("receipts".utf8), Array(#"{"method":"unread_counts","params":{"user_id":"u1"}}"#.utf8)])
                let counts = try JSONParser.parse(reply.last ?? [])
                // u1 sent m1 (its own message never counts); everything up to m<n> is read.
                let expected = (n + 1..<10).filter { $0 % 20 != 1 }.count
                #expect(counts["total_unread_count"]?.int64Value == Int64(expected), "after reading m\(n)")
            }
        }
    }
}
