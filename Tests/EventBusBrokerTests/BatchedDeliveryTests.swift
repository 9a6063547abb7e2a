import EventBus
import Foundation
import Testing

/// Batched delivery: a peer that says `"batch": true` in HELLO gets its
/// consumers' events as `EVTS NAME (SEQ TOPIC EVENT)…`, within its credit.
@Suite struct BatchedDeliveryTests {
    /// The (seq, topic, event) triples of the next EVTS, or nil after the timeout.
    static func nextBatch(_ peer: RawPeer) throws -> [(seq: String, topic: String, event: [UInt8])]? {
        while let frames = try peer.receive() {
            guard frames[1] == Array("EVTS".utf8) else { continue }
            #expect(frames.count == 4, "EVTS is NAME and one BATCH frame")
            #expect(frames[2] == Array("b".utf8))
            var batch: [(seq: String, topic: String, event: [UInt8])] = []
            let wellFormed = DeliveryBatch.decode(frames[3]) { seq, topic, event in
                batch.append((String(seq), String(decoding: topic, as: UTF8.self), Array(event)))
            }
            #expect(wellFormed)
            return batch
        }
        return nil
    }

    static func hello(_ peer: RawPeer, batch: String) throws -> Reply {
        try peer.call("HELLO", [#"{"name":"test","role":"plugin","version":"1","batch":\#(batch)}"#])
    }

    @Test func aBatchingPeerGetsEveryEventInSeqOrderInEVTSMessages() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let events = (0..<250).map { Events.read(message: "m\($0)") }
        #expect(try bus.peer().call("PUB", [Array("in".utf8)] + events).values.count == 250)
        let peer = try bus.peer()
        let hello = try Self.hello(peer, batch: "true")
        #expect(hello.json["batch"] as? Bool == true)
        #expect((hello.json["features"] as? [String])?.contains("batch") == true)
        #expect(try peer.call("CONSUME", ["b", "earliest", "1000", "in/"]).values == ["1"])
        var received: [(seq: String, topic: String, event: [UInt8])] = []
        var messages = 0
        while received.count < 250, let batch = try Self.nextBatch(peer) {
            received += batch
            messages += 1
        }
        #expect(received.map(\.seq) == (1...250).map(String.init))
        #expect(received.allSatisfy { $0.topic == "in/messaging:general/message.read" })
        #expect(received.map(\.event) == events)
        #expect(messages < 250, "events came several to a message")
    }

    @Test func creditBoundsTheEventsInFlightAcrossBatches() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let events = (0..<10).map { Events.read(message: "m\($0)") }
        #expect(try bus.peer().call("PUB", [Array("in".utf8)] + events).isOK)
        let peer = try bus.peer()
        #expect(try Self.hello(peer, batch: "true").isOK)
        #expect(try peer.call("CONSUME", ["b", "earliest", "4", "in/"]).isOK)
        #expect(try Self.nextBatch(peer)?.map(\.seq) == ["1", "2", "3", "4"])
        #expect(try peer.messagesBeforeControl().isEmpty)
        try peer.send("ACK", [Array("b".utf8), Array("3".utf8)])
        #expect(try Self.nextBatch(peer)?.map(\.seq) == ["5", "6", "7"])
    }

    @Test func aPeerThatDidNotAskGetsOneEVTPerEventAndFalseTurnsBatchingOff() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        #expect(try bus.peer().call("PUB", [Array("in".utf8), Events.read(message: "m1"), Events.read(message: "m2")]).isOK)
        let plain = try bus.peer()
        #expect(try plain.call("CONSUME", ["p", "earliest", "10", "in/"]).isOK)
        #expect(try ConsumerTests.nextEvent(plain)?.seq == "1")
        #expect(try ConsumerTests.nextEvent(plain)?.seq == "2")

        let switched = try bus.peer()
        #expect(try Self.hello(switched, batch: "true").isOK)
        let off = try Self.hello(switched, batch: "false")
        #expect(off.json["batch"] as? Bool == false)
        #expect(try switched.call("CONSUME", ["q", "earliest", "10", "in/"]).isOK)
        #expect(try ConsumerTests.nextEvent(switched)?.seq == "1")
    }

    @Test func aBatchValueThatIsNotABooleanIsBadArgs() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        let reply = try Self.hello(peer, batch: #""yes""#)
        #expect(reply.code == "bad_args")
        #expect(reply.message.contains("batch"))
        #expect(try peer.call("PING").isOK)
    }
}
