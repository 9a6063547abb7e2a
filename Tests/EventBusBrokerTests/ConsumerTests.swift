import EventBus
import Foundation
import Testing

/// CONSUME, EVT, ACK, CANCEL: durable consumers with credit, resume and takeover.
@Suite struct ConsumerTests {
    /// Receives the next EVT and returns (seq, topic).
    static func nextEvent(_ peer: RawPeer) throws -> (seq: String, topic: String)? {
        while let frames = try peer.receive() {
            if frames.count == 6 && frames[1] == Array("EVT".utf8) {
                return (String(decoding: frames[3], as: UTF8.self), String(decoding: frames[4], as: UTF8.self))
            }
        }
        return nil
    }

    static func publish(_ bus: TestBroker, _ count: Int, stage: String = "in") throws {
        let events = (0..<count).map { Events.read(message: "m\($0)") }
        #expect(try bus.peer().call("PUB", [Array(stage.utf8)] + events).values.count == count)
    }

    @Test func consumerReceivesMatchingEventsInSeqOrder() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        try Self.publish(bus, 3)
        try Self.publish(bus, 2, stage: "plugin-a")
        let peer = try bus.peer()
        let reply = try peer.call("CONSUME", ["p", "earliest", "100", "plugin-a/"])
        #expect(reply.values == ["1"])
        #expect(try Self.nextEvent(peer)?.seq == "4")
        let second = try #require(try Self.nextEvent(peer))
        #expect(second.seq == "5")
        #expect(second.topic == "plugin-a/messaging:general/message.read")
    }

    @Test func creditBoundsEventsInFlightUntilAck() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        try Self.publish(bus, 5)
        let peer = try bus.peer()
        #expect(try peer.call("CONSUME", ["c", "earliest", "2", "in/"]).isOK)
        #expect(try Self.nextEvent(peer)?.seq == "1")
        #expect(try Self.nextEvent(peer)?.seq == "2")
        #expect(try peer.messagesBeforeControl().isEmpty)
        try peer.send("ACK", [Array("c".utf8), Array("1".utf8)])
        #expect(try Self.nextEvent(peer)?.seq == "3")
        try peer.send("ACK", [Array("c".utf8), Array("3".utf8)])
        #expect(try Self.nextEvent(peer)?.seq == "4")
        #expect(try Self.nextEvent(peer)?.seq == "5")
    }

    @Test func eventsPublishedAfterConsumeArriveLive() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        #expect(try peer.call("CONSUME", ["c", "latest", "10", "in/"]).values == ["1"])
        try Self.publish(bus, 1)
        #expect(try Self.nextEvent(peer)?.seq == "1")
    }

    @Test func resumeStartsAfterTheLastAckAlsoAfterARestart() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        try Self.publish(bus, 4)
        let first = try bus.peer()
        #expect(try first.call("CONSUME", ["c", "resume", "10", "in/"]).values == ["1"])
        for _ in 0..<4 { _ = try Self.nextEvent(first) }
        try first.send("ACK", [Array("c".utf8), Array("2".utf8)])
        #expect(try first.call("PING").isOK)  // the ACK was handled before the PING
        try bus.restart()
        let second = try bus.peer()
        #expect(try second.call("CONSUME", ["c", "resume", "10", "in/"]).values == ["3"])
        #expect(try Self.nextEvent(second)?.seq == "3")
        let stats = try second.call("STATS").json
        let consumer = try #require((stats["consumers"] as? [[String: Any]])?.first)
        #expect(consumer["name"] as? String == "c")
        #expect(consumer["acked"] as? Int == 2)
        #expect(consumer["lag"] as? Int == 2)
        #expect(consumer["connected"] as? Bool == true)
    }

    @Test func startAtASeqAndLatestAndEarliest() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        try Self.publish(bus, 5)
        let peer = try bus.peer()
        #expect(try peer.call("CONSUME", ["a", "4", "10", "in/"]).values == ["4"])
        #expect(try Self.nextEvent(peer)?.seq == "4")
        #expect(try peer.call("CONSUME", ["b", "latest", "10", "in/"]).values == ["6"])
        #expect(try peer.call("CONSUME", ["c", "earliest", "10", "in/"]).values == ["1"])
    }

    @Test func secondConsumeTakesOverAndTheOldPeerGetsEnd() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let old = try bus.peer()
        #expect(try old.call("CONSUME", ["c", "earliest", "10", "in/"]).isOK)
        let new = try bus.peer()
        #expect(try new.call("CONSUME", ["c", "earliest", "10", "in/"]).isOK)
        let end = try #require(try old.receive())
        #expect(end == [Array("EB1".utf8), Array("END".utf8), Array("c".utf8), Array("taken over by another CONSUME".utf8)])
        try Self.publish(bus, 1)
        #expect(try Self.nextEvent(new)?.seq == "1")
        #expect(try old.call("ACK", ["c", "1"]).code == "bad_args")
    }

    @Test func malformedConsumeArgumentsAreBadArgs() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        #expect(try peer.call("CONSUME", ["Bad Name", "earliest", "10", "in/"]).code == "bad_args")
        #expect(try peer.call("CONSUME", ["c", "sometime", "10", "in/"]).code == "bad_args")
        #expect(try peer.call("CONSUME", ["c", "0", "10", "in/"]).code == "bad_args")
        #expect(try peer.call("CONSUME", ["c", "earliest", "0", "in/"]).code == "bad_args")
        #expect(try peer.call("CONSUME", ["c", "earliest", "65537", "in/"]).code == "bad_args")
        #expect(try peer.call("CONSUME", ["c", "earliest", "10"]).code == "bad_args")
        #expect(try peer.call("CONSUME", ["c", "earliest"]).code == "bad_frame")
        #expect(try peer.call("CONSUME", ["c", "earliest", "10", "nowhere/"]).code == "unknown_stage")
    }

    /// docs/protocol.md, "Encodings": START, CREDIT and an ACK's SEQ are decimals as a reference's
    /// SEQ is, 1 to 20 digits and nothing else; leading zeros within those 20 are the same number.
    @Test func startCreditAndAckSeqAreOneToTwentyDigitsAndNothingElse() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        try Self.publish(bus, 3)
        let peer = try bus.peer()
        let twentyOne = String(repeating: "0", count: 20) + "1"
        for start in ["+1", " 1", "1 ", "0x1", twentyOne] {
            #expect(try peer.call("CONSUME", ["c", start, "10", "in/"]).code == "bad_args", "START \(start)")
        }
        for credit in ["+10", "10 ", "1e1", String(repeating: "0", count: 19) + "10"] {
            #expect(try peer.call("CONSUME", ["c", "earliest", credit, "in/"]).code == "bad_args", "CREDIT \(credit)")
        }
        #expect(try peer.call("CONSUME", ["c", "00000000000000000002", "0010", "in/"]).values == ["2"])
        for seq in ["+2", "2 ", twentyOne] {
            #expect(try peer.call("ACK", ["c", seq]).code == "bad_args", "SEQ \(seq)")
        }
        // An ACK that takes effect gives no reply: the CANCEL after it shows it was not refused.
        try peer.send("ACK", [Array("c".utf8), Array("00000000000000000003".utf8)])
        #expect(try peer.call("CANCEL", ["c"]).isOK)
        #expect(try peer.call("CONSUME", ["c", "resume", "10", "in/"]).values == ["4"])
    }

    @Test func ackOrCancelOfAnotherPeersConsumerIsBadArgs() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        try Self.publish(bus, 1)
        let owner = try bus.peer()
        #expect(try owner.call("CONSUME", ["c", "earliest", "10", "in/"]).isOK)
        let stranger = try bus.peer()
        #expect(try stranger.call("ACK", ["c", "1"]).code == "bad_args")
        #expect(try stranger.call("CANCEL", ["c"]).code == "bad_args")
        #expect(try stranger.call("ACK", ["nobody", "1"]).code == "bad_args")
        #expect(try owner.call("ACK", ["c", "x"]).code == "bad_args")
        #expect(try owner.call("ACK", ["c", "99"]).code == "bad_args")
    }

    /// docs/protocol.md, ACK's check order: the frames are counted before a name is looked up.
    @Test func ackWithoutItsSeqFrameIsBadFrameWhateverTheName() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        try Self.publish(bus, 1)
        let owner = try bus.peer()
        #expect(try owner.call("CONSUME", ["c", "earliest", "10", "in/"]).isOK)
        #expect(try owner.call("ACK", ["c"]).code == "bad_frame")
        #expect(try owner.call("ACK", ["nobody"]).code == "bad_frame")
        #expect(try owner.call("ACK", [String]()).code == "bad_frame")
        let stranger = try bus.peer()
        #expect(try stranger.call("ACK", ["c"]).code == "bad_frame")
    }

    @Test func cancelStopsDeliveryAndKeepsTheOffset() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        try Self.publish(bus, 2)
        let peer = try bus.peer()
        #expect(try peer.call("CONSUME", ["c", "earliest", "1", "in/"]).isOK)
        #expect(try Self.nextEvent(peer)?.seq == "1")
        try peer.send("ACK", [Array("c".utf8), Array("1".utf8)])
        #expect(try peer.call("CANCEL", ["c"]).isOK)
        try Self.publish(bus, 1)
        #expect(try peer.messagesBeforeControl().isEmpty)
        #expect(try peer.call("CONSUME", ["c", "resume", "10", "in/"]).values == ["2"])
    }

    @Test func privateTypesNeverReachConsumersOfOut() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let publisher = try bus.peer()
        #expect(try publisher.call("PUB", [Array("out".utf8), Events.userUpdated("bob", readReceipts: false), Events.read()]).values == ["1", "2"])
        let out = try bus.peer()
        #expect(try out.call("CONSUME", ["o", "earliest", "10", "out/"]).isOK)
        #expect(try Self.nextEvent(out)?.seq == "2")
        // What `out` withholds is no lag: once the deliverable event is acked, nothing is left.
        try out.send("ACK", [Array("o".utf8), Array("2".utf8)])
        let stats = try out.call("STATS").json
        let consumer = (stats["consumers"] as? [[String: Any]])?.first { $0["name"] as? String == "o" }
        #expect(consumer?["lag"] as? Int == 0)
        #expect((stats["stages"] as? [String: Int])?["out"] == 2)
        // Stages inside the pipeline see everything, settings included.
        #expect(try publisher.call("PUB", [Array("in".utf8), Events.userUpdated("bob", readReceipts: true)]).isOK)
        let inner = try bus.peer()
        #expect(try inner.call("CONSUME", ["i", "earliest", "10", "in/"]).isOK)
        #expect(try Self.nextEvent(inner)?.topic == "in/@bob/user.updated")
    }
}
