import EventBus
import Foundation
import Testing

/// PUBS: a PUB whose events travel in one BATCH frame (docs/protocol.md, "Batched publish").
@Suite struct PublishBatchTests {
    static let stage = Array("in".utf8)

    @Test func aBatchIsAppendedAndAnsweredExactlyAsThePubOfItsEvents() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        let events = [Events.read(message: "m1"), Events.read(message: "m2"), Events.read(message: "m3")]
        #expect(try peer.call("PUBS", [Self.stage, PublishBatch.encode(events)]).values == ["1", "2", "3"])
        // The same events again: deduplicated, answered with their SEQs, nothing appended.
        #expect(try peer.call("PUB", [Self.stage] + events).values == ["1", "2", "3"])
        let fourth = Events.read(message: "m4")
        #expect(try peer.call("PUBS", [Self.stage, PublishBatch.encode([events[1], fourth])]).values == ["2", "4"])
        #expect(try peer.call("STATS").json["head_seq"] as? Int == 4)
        // What was logged is each event's bytes, as published.
        #expect(try peer.call("CONSUME", ["check", "earliest", "10", "in/"]).isOK)
        var logged: [[UInt8]] = []
        while logged.count < 4, let frames = try peer.receive(), frames.count == 6 { logged.append(frames[5]) }
        #expect(logged == events + [fourth])
    }

    @Test func aPeerThatAskedForCompactConfirmsGetsAPubsSeqsInOneFrame() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        #expect(try peer.call("HELLO", [#"{"name":"t","compact_ok":true}"#]).isOK)
        let first = Events.read(message: "m1")
        let reply = try peer.call("PUBS", [Self.stage, PublishBatch.encode([first, Events.read(message: "m2"), first])])
        #expect(reply.values == ["1 2 1"])
    }

    @Test func oneBadEventRefusesTheWholeBatchAndNamesItsIndex() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        let bad = Events.make(type: "message.read", subject: "messaging:general",
                              data: #"{"cid":"messaging:general","user_id":"bo b","message_id":"m1"}"#)
        let reply = try peer.call("PUBS", [Self.stage, PublishBatch.encode([Events.read(), bad])])
        #expect(reply.code == "bad_event")
        #expect(reply.message.contains("event 1"))
        #expect(try peer.call("STATS").json["head_seq"] as? Int == 0)
    }

    @Test func aMalformedBatchIsBadFrameAndAppendsNothing() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        let event = Events.read()
        let good = PublishBatch.encode([event])
        let cases: [(batch: [UInt8], names: String)] = [
            (Array("\(event.count + 1)\n".utf8) + event, "event 0"),  // runs past the frame
            (good + Array("12".utf8), "event 1"),  // a header without its newline
            (good + Array("x\n{}".utf8), "event 1"),  // not a length
            (Array("\n".utf8) + event, "event 0"),  // an empty length
            (Array("+\(event.count)\n".utf8) + event, "event 0"),  // a sign (docs/protocol.md, "Encodings")
            ([], "empty"),
        ]
        for (batch, names) in cases {
            let reply = try peer.call("PUBS", [Self.stage, batch])
            #expect(reply.code == "bad_frame", "\(names)")
            #expect(reply.message.contains(names), "\(reply.message)")
        }
        #expect(try peer.call("PUBS", [Self.stage]).code == "bad_frame")
        #expect(try peer.call("PUBS", [Self.stage, good, good]).code == "bad_frame")
        #expect(try peer.call("PUBS", [Array("nowhere".utf8), good]).code == "unknown_stage")
        #expect(try peer.call("STATS").json["head_seq"] as? Int == 0)
        // The broker goes on serving the same peer; leading zeros within 20 digits are the same length.
        #expect(try peer.call("PUBS", [Self.stage, good]).values == ["1"])
        let second = Events.read(message: "m2")
        let padded = Array(String(format: "%020d\n", second.count).utf8) + second
        #expect(try peer.call("PUBS", [Self.stage, padded]).values == ["2"])
    }

    @Test func moreEventsThanABatchMayHoldIsTooLarge() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        let events = (0...WireProtocol.maxBatchEvents).map { Events.read(message: "m\($0)") }
        let reply = try peer.call("PUBS", [Self.stage, PublishBatch.encode(events)])
        #expect(reply.code == "too_large")
        #expect(try peer.call("PUBS", [Self.stage, PublishBatch.encode(events.dropLast())]).values.count == WireProtocol.maxBatchEvents)
    }

    @Test func referencesTravelInABatchToo() throws {
        let bus = try ForwardTests.broker(); defer { bus.stop() }
        let peer = try bus.peer()
        let first = Events.read(message: "m1"), second = Events.read(message: "m2")
        #expect(try peer.call("PUB", [Self.stage, first, second]).values == ["1", "2"])
        let emitted = Events.make(type: "receipt.audit", subject: "messaging:general", data: "{}")
        let batch = PublishBatch.encode([ForwardTests.reference(2), emitted, ForwardTests.reference(1)])
        #expect(try peer.call("PUBS", [Array("a".utf8), batch]).values == ["3", "4", "5"])
        #expect(try ForwardTests.logged(bus, "a/").map(\.event) == [second, emitted, first])
    }

    @Test func helloListsTheFeature() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let features = try bus.peer().call("HELLO", [#"{"name":"t"}"#]).json["features"] as? [String]
        #expect(features?.contains("pubs") == true)
    }

    @Test func theFrameFormatRoundTrips() throws {
        let events: [[UInt8]] = [[], Array("@7".utf8), Array(repeating: UInt8(ascii: "x"), count: 1_234), Array("{}\n".utf8)]
        let batch = PublishBatch.encode(events)
        #expect(Array(batch.prefix(3)) == Array("0\n2".utf8))
        #expect(try PublishBatch.split(batch, limit: 10) == events)
        #expect(throws: BusError.self) { try PublishBatch.split(batch, limit: 3) }
        // After leading frames (the broker's STAGE): the limit counts the events alone, and an
        // error names an event by its place in the batch.
        let stage = Array("in".utf8)
        #expect(try PublishBatch.split(batch, limit: 4, after: [stage]) == [stage] + events)
        #expect(throws: BusError.self) { try PublishBatch.split(batch, limit: 3, after: [stage]) }
        let broken = batch + Array("9\nab".utf8)
        #expect { try PublishBatch.split(broken, limit: 10, after: [stage]) } throws: { error in
            (error as? BusError)?.message.hasPrefix("BATCH: event 4 at byte") == true
        }
    }
}
