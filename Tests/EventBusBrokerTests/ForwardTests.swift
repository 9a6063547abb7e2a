import EventBus
import Foundation
import EventBusBroker
import Testing

/// PUB with `@SEQ` frames: forwarding an event of the previous stage by
/// reference (docs/protocol.md, "Forwarding by reference").
@Suite struct ForwardTests {
    /// A broker with the pipeline a → b: `in` → a → `a` → b → `out`.
    static func broker(cacheBytes: Int? = nil) throws -> TestBroker {
        try TestBroker { config in
            config.pipeline = ["a", "b"]
            if let cacheBytes { config.cacheBytes = cacheBytes }
        }
    }

    /// Every event of `prefix` from the start: (seq, topic, bytes).
    static func logged(_ bus: TestBroker, _ prefix: String) throws -> [(seq: String, topic: String, event: [UInt8])] {
        let peer = try bus.peer()
        let name = "read-\(UUID().uuidString.prefix(8).lowercased())"
        #expect(try peer.call("CONSUME", [name, "earliest", "1000", prefix]).isOK)
        var events: [(String, String, [UInt8])] = []
        while let frames = try peer.receive(), frames.count == 6, frames[1] == Array("EVT".utf8) {
            events.append((String(decoding: frames[3], as: UTF8.self), String(decoding: frames[4], as: UTF8.self), frames[5]))
        }
        return events
    }

    static func reference(_ seq: Int) -> [UInt8] { Array("@\(seq)".utf8) }

    @Test func aReferenceAppendsTheSameBytesUnderTheNextStagesTopic() throws {
        let bus = try Self.broker(); defer { bus.stop() }
        let peer = try bus.peer()
        let ack = Events.read(message: "m1")
        #expect(try peer.call("PUB", [Array("in".utf8), ack, Events.read(message: "m2")]).values == ["1", "2"])
        // Forwarded and emitted events mix in one PUB, in order.
        let emitted = Events.make(type: "receipt.audit", subject: "messaging:general", data: "{}")
        #expect(try peer.call("PUB", [Array("a".utf8), Self.reference(2), emitted, Self.reference(1)]).values == ["3", "4", "5"])
        let stage = try Self.logged(bus, "a/")
        #expect(stage.map(\.seq) == ["3", "4", "5"])
        #expect(stage.map(\.topic) == ["a/messaging:general/message.read", "a/messaging:general/receipt.audit",
                                       "a/messaging:general/message.read"])
        #expect(stage[2].event == ack)
        #expect(stage[1].event == emitted)
        // And on to `out`, from `a`, by the stage's plugin b.
        #expect(try peer.call("PUB", [Array("out".utf8), Self.reference(5)]).values == ["6"])
        let out = try Self.logged(bus, "out/")
        #expect(out.map(\.topic) == ["out/messaging:general/message.read"])
        #expect(out.first?.event == ack)
    }

    @Test func anEventStampedAtInIsForwardedAsStampedWithItsIdentity() throws {
        let bus = try Self.broker(); defer { bus.stop() }
        let peer = try bus.peer()
        // No `time`: the broker stamps it at `in`, which moves `source` and `id` within the bytes.
        let untimed = Array(#"{"specversion":"1.0","id":"u-1","source":"/test","type":"message.read","subject":"messaging:general","data":{"cid":"messaging:general","user_id":"bob","message_id":"m1"}}"#.utf8)
        #expect(try peer.call("PUB", [Array("in".utf8), untimed]).values == ["1"])
        #expect(try peer.call("PUB", [Array("a".utf8), Self.reference(1)]).values == ["2"])
        let stamped = try #require(try Self.logged(bus, "in/").first?.event)
        #expect(stamped.count > untimed.count)
        #expect(try Self.logged(bus, "a/").first?.event == stamped)
        // Its identity at `a` is (/test, u-1): the stamped bytes published again are a repeat.
        #expect(try peer.call("PUB", [Array("a".utf8), stamped]).values == ["2"])
        #expect(try peer.call("STATS").json["head_seq"] as? Int == 2)
    }

    /// An `id` with an escape is its decoded text: the identity is kept apart from the bytes,
    /// through the stamp at `in`, a reference to the next stage and a restart.
    @Test func anIdentityWithAnEscapeIsItsDecodedTextThroughStampReferenceAndRestart() throws {
        let bus = try Self.broker(); defer { bus.stop() }
        func read(id: String, time: Bool) -> [UInt8] {
            Array(("{\"specversion\":\"1.0\",\"id\":\"\(id)\",\"source\":\"/test\",\"type\":\"message.read\","
                + (time ? "\"time\":\"2026-11-22T03:10:00.000Z\"," : "")
                + #""subject":"messaging:general","data":{"cid":"messaging:general","user_id":"bob","message_id":"m1"}}"#).utf8)
        }
        let escaped = read(id: #"u\u002d2"#, time: false), plain = read(id: "u-2", time: true)
        let peer = try bus.peer()
        #expect(try peer.call("PUB", [Array("in".utf8), escaped]).values == ["1"])
        #expect(try peer.call("PUB", [Array("in".utf8), plain, escaped]).values == ["1", "1"])
        #expect(try peer.call("PUB", [Array("a".utf8), Self.reference(1)]).values == ["2"])
        #expect(try peer.call("PUB", [Array("a".utf8), plain]).values == ["2"])
        try bus.restart()
        // Read back from the log: the identity is the one stored with the record.
        let again = try bus.peer()
        #expect(try again.call("PUB", [Array("in".utf8), plain]).values == ["1"])
        #expect(try again.call("PUB", [Array("b".utf8), Self.reference(2), read(id: "u-3", time: true)]).values == ["3", "4"])
        #expect(try again.call("PUB", [Array("b".utf8), plain]).values == ["3"])
        #expect(try again.call("STATS").json["head_seq"] as? Int == 4)
    }

    @Test func aReferenceIsDeduplicatedLikeTheEventItNames() throws {
        let bus = try Self.broker(); defer { bus.stop() }
        let peer = try bus.peer()
        let ack = Events.read(message: "m1")
        #expect(try peer.call("PUB", [Array("in".utf8), ack]).values == ["1"])
        #expect(try peer.call("PUB", [Array("a".utf8), Self.reference(1)]).values == ["2"])
        // A replay of the reference, the bytes themselves, and both in one batch: all are SEQ 2.
        #expect(try peer.call("PUB", [Array("a".utf8), Self.reference(1)]).values == ["2"])
        #expect(try peer.call("PUB", [Array("a".utf8), ack]).values == ["2"])
        #expect(try peer.call("PUB", [Array("a".utf8), Self.reference(1), Self.reference(1)]).values == ["2", "2"])
        let stats = try peer.call("STATS").json
        #expect(stats["head_seq"] as? Int == 2)
        #expect(stats["dedup_hits"] as? Int == 4)
        #expect(stats["forwarded"] as? Int == 1)
        // Twice in a fresh batch: appended once.
        #expect(try peer.call("PUB", [Array("in".utf8), Events.read(message: "m2")]).values == ["3"])
        #expect(try peer.call("PUB", [Array("a".utf8), Self.reference(3), Self.reference(3)]).values == ["4", "4"])
    }

    @Test func onlyEventsOfTheStageBeforeMayBeForwarded() throws {
        let bus = try Self.broker(); defer { bus.stop() }
        let peer = try bus.peer()
        #expect(try peer.call("PUB", [Array("in".utf8), Events.read()]).values == ["1"])
        // b's stage and `out` follow `a`, not `in`.
        for stage in ["b", "out"] {
            let reply = try peer.call("PUB", [Array(stage.utf8), Self.reference(1)])
            #expect(reply.code == "bad_event")
            #expect(reply.message.contains("event 0: @1 is an event of stage in"))
            #expect(reply.message.contains("forwards only events of a"))
        }
        // Nothing precedes `in` and `diag`.
        for stage in ["in", "diag"] {
            let reply = try peer.call("PUB", [Array(stage.utf8), Self.reference(1)])
            #expect(reply.code == "bad_event")
            #expect(reply.message.contains("nothing may be forwarded by reference to stage \(stage)"))
        }
        #expect(try peer.call("STATS").json["head_seq"] as? Int == 1)
    }

    @Test func aReferenceToNoLoggedEventOrNotADecimalSeqIsBadArgsAndRefusesTheBatch() throws {
        let bus = try Self.broker(); defer { bus.stop() }
        let peer = try bus.peer()
        #expect(try peer.call("PUB", [Array("in".utf8), Events.read()]).values == ["1"])
        for (frame, words) in [("@2", "@2 names no logged event (the log holds 1 to 1)"), ("@0", "a reference is @ and a SEQ"),
                               ("@", "a reference is @ and a SEQ"), ("@1x", "not \"@1x\""),
                               ("@99999999999999999999", "a reference is @ and a SEQ"),
                               // docs/protocol.md, "Encodings": no sign, and at most 20 digits even if zeros.
                               ("@+1", "a reference is @ and a SEQ"),
                               ("@000000000000000000001", "a reference is @ and a SEQ")] {
            let reply = try peer.call("PUB", [Array("a".utf8), Self.reference(1), Array(frame.utf8)])
            #expect(reply.code == "bad_args", "\(frame)")
            #expect(reply.message.contains("event 1: "), "\(frame)")
            #expect(reply.message.contains(words), "\(frame): \(reply.message)")
        }
        // Nothing of a refused batch was appended.
        #expect(try peer.call("STATS").json["head_seq"] as? Int == 1)
        // Leading zeros within 20 digits are the same SEQ.
        #expect(try peer.call("PUB", [Array("a".utf8), Array("@00000000000000000001".utf8)]).values == ["2"])
    }

    @Test func referencesCountTheBytesTheyNameAgainstTheBatchLimit() throws {
        let bus = try Self.broker(); defer { bus.stop() }
        let peer = try bus.peer()
        // A `reply` may be up to the batch limit: two references to one are too much for one batch.
        let padding = String(repeating: "x", count: WireProtocol.maxBatchBytes / 2 + 1_000)
        let big = Events.make(type: "reply", subject: "receipts", data: #"{"result":"\#(padding)"}"#)
        #expect(try peer.call("PUB", [Array("a".utf8), big]).values == ["1"])
        let reply = try peer.call("PUB", [Array("out".utf8), Self.reference(1), Array("@1".utf8)])
        // The second is a repeat of the first within the batch, yet its bytes count: refused.
        #expect(reply.code == "too_large")
        #expect(reply.message.contains("event 1: the events referenced"))
        #expect(try peer.call("PUB", [Array("out".utf8), Self.reference(1)]).values == ["2"])
    }

    @Test func anEventNoLongerCachedIsForwardedFromTheLog() throws {
        // A cache of one record: every reference to an older SEQ reads the log back.
        let bus = try Self.broker(cacheBytes: 1); defer { bus.stop() }
        let peer = try bus.peer()
        let acks = (0..<50).map { Events.read(message: "m\($0)") }
        #expect(try peer.call("PUB", [Array("in".utf8)] + acks).values.count == 50)
        let seqs = try peer.call("PUB", [Array("a".utf8)] + (1...50).map(Self.reference)).values
        #expect(seqs == (51...100).map(String.init))
        #expect(try Self.logged(bus, "a/").map(\.event) == acks)
    }

    @Test func helloListsTheFeature() throws {
        let bus = try Self.broker(); defer { bus.stop() }
        let reply = try bus.peer().call("HELLO", [#"{"name":"t","role":"plugin","version":"1"}"#])
        #expect((reply.json["features"] as? [String])?.contains("forward") == true)
    }
}
