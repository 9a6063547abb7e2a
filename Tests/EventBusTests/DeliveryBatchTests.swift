import Testing

@testable import EventBus
@testable import EventBusCore

/// The EVTS BATCH frame: `SEQ TOPICLEN EVENTLEN\n TOPIC EVENT`, again and again.
@Suite struct DeliveryBatchTests {
    static func decoded(_ batch: [UInt8]) -> (events: [(UInt64, [UInt8], [UInt8])], complete: Bool) {
        var events: [(UInt64, [UInt8], [UInt8])] = []
        let complete = DeliveryBatch.decode(batch) { events.append(($0, Array($1), Array($2))) }
        return (events, complete)
    }

    @Test func theLayoutIsAsDocumented() {
        let batch = DeliveryBatch.encode([(1201, Array("in/a/b".utf8), Array("{}".utf8)), (9, Array("out/c/d".utf8), Array("[1]".utf8))])
        #expect(String(decoding: batch, as: UTF8.self) == "1201 6 2\nin/a/b{}9 7 3\nout/c/d[1]")
    }

    @Test func whatIsEncodedDecodesToTheSameEventsWhateverTheirBytes() {
        let events: [(seq: UInt64, topic: [UInt8], event: [UInt8])] = [
            (1, Array("in/messaging:general/message.read".utf8), Array(#"{"a":"1 2\n3"}"#.utf8)),
            (UInt64.max, Array("diag/x y/receipt.rejected".utf8), []),  // a space in a subject, an empty event
            (42, [], Array("\n\n 7 7\n".utf8)),
        ]
        let (decoded, complete) = Self.decoded(DeliveryBatch.encode(events))
        #expect(complete)
        #expect(decoded.map(\.0) == events.map(\.seq))
        #expect(decoded.map(\.1) == events.map(\.topic))
        #expect(decoded.map(\.2) == events.map(\.event))
        #expect(Self.decoded([]).events.isEmpty && Self.decoded([]).complete)
    }

    @Test(arguments: ["12 3 4\nabc", "12 3\nabcd", "x 1 1\nab", "1 99 0\nab", "1 1 1ab", "99999999999999999999999 0 0\n"])
    func aMalformedBatchIsReportedAfterTheEventsBeforeTheFault(text: String) {
        let good = DeliveryBatch.encode([(7, Array("t".utf8), Array("e".utf8))])
        let (events, complete) = Self.decoded(good + Array(text.utf8))
        #expect(!complete)
        #expect(events.map(\.0) == [7])
    }
}
