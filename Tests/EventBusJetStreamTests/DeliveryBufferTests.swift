import EventBus
@testable import EventBusJetStream
import Testing

/// The EVT and EVTS messages of the gateway's deliveries, without a gateway.
@Suite struct DeliveryBufferTests {
    static let name = Array("reader".utf8)

    static func decoded(_ frames: [[UInt8]]) -> [(UInt64, [UInt8], [UInt8])] {
        var events: [(UInt64, [UInt8], [UInt8])] = []
        #expect(frames.count == 4 && frames[1] == Verb.evts.bytes && frames[2] == name)
        let wellFormed = DeliveryBatch.decode(frames[3]) { seq, topic, event in events.append((seq, Array(topic), Array(event))) }
        #expect(wellFormed)
        return events
    }

    @Test func unbatchedEachDeliveryIsAnEVTAtOnce() {
        var buffer = DeliveryBuffer(name: Self.name, batched: false)
        let frames = buffer.add(seq: 7, topic: Array("in/c/t".utf8), event: Array("{}".utf8))
        #expect(frames == [WireProtocol.signature, Verb.evt.bytes, Self.name, Array("7".utf8), Array("in/c/t".utf8), Array("{}".utf8)])
        #expect(buffer.isEmpty)
        let flushed = buffer.flush()
        #expect(flushed == nil)
    }

    @Test func batchedDeliveriesGatherIntoOneEVTSInOrder() throws {
        var buffer = DeliveryBuffer(name: Self.name, batched: true)
        for seq in UInt64(1)...3 {
            #expect(buffer.add(seq: seq, topic: Array("in/c/t".utf8), event: Array("{\"n\":\(seq)}".utf8)) == nil)
        }
        let flushed = buffer.flush()
        let frames = try #require(flushed)
        let events = Self.decoded(frames)
        #expect(events.map(\.0) == [1, 2, 3])
        #expect(events.map { String(decoding: $0.2, as: UTF8.self) } == [#"{"n":1}"#, #"{"n":2}"#, #"{"n":3}"#])
        #expect(buffer.isEmpty)
        let again = buffer.flush()
        #expect(again == nil)
    }

    @Test func aBatchHoldsAtMostMaxBatchEvents() throws {
        var buffer = DeliveryBuffer(name: Self.name, batched: true)
        var sent: [[[UInt8]]] = []
        for seq in UInt64(1)...UInt64(WireProtocol.maxBatchEvents + 5) {
            if let frames = buffer.add(seq: seq, topic: [], event: Array("{}".utf8)) { sent.append(frames) }
        }
        #expect(sent.count == 1)
        #expect(Self.decoded(sent[0]).map(\.0) == Array(1...UInt64(WireProtocol.maxBatchEvents)))
        let flushed = buffer.flush()
        let rest = try #require(flushed)
        #expect(Self.decoded(rest).map(\.0) == Array(UInt64(WireProtocol.maxBatchEvents + 1)...UInt64(WireProtocol.maxBatchEvents + 5)))
    }

    /// A delivery that would take the batch past its bytes starts the next one.
    @Test func aBatchStaysWithinMaxBatchBytes() throws {
        var buffer = DeliveryBuffer(name: Self.name, batched: true)
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: WireProtocol.maxBatchBytes / 3)
        var sent: [[[UInt8]]] = []
        for seq in UInt64(1)...4 {
            if let frames = buffer.add(seq: seq, topic: [], event: big) { sent.append(frames) }
        }
        #expect(sent.count == 1)
        #expect(sent[0][3].count <= WireProtocol.maxBatchBytes)
        #expect(Self.decoded(sent[0]).map(\.0) == [1, 2])
        let flushed = buffer.flush()
        #expect(Self.decoded(try #require(flushed)).map(\.0) == [3, 4])
    }
}
