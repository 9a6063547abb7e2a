import EventBus
import Foundation
import Testing
import ZeroMQ

/// A consumer reading while publishers write: every EVT's SEQ names exactly the event logged with it.
@Suite struct LiveConsumerConsistencyTests {
    @Test func eventsDeliveredDuringPublishingCarryTheirOwnSeq() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let consumer = try bus.peer()
        #expect(try consumer.call("CONSUME", ["live", "latest", "2000", "in/"]).isOK)
        let publisher = try bus.peer()
        var idBySeq: [String: String] = [:]
        for batch in 0..<40 {
            let ids = (0..<50).map { "e\(batch)-\($0)" }
            let reply = try publisher.call("PUB", [Array("in".utf8)] + ids.map { Events.read(id: $0) })
            for (id, seq) in zip(ids, reply.values) { idBySeq[seq] = id }
        }
        var seen = 0
        var mismatches: [String] = []
        while seen < 2_000, let frames = try consumer.receive() {
            guard frames.count == 6 else { continue }
            seen += 1
            let seq = String(decoding: frames[3], as: UTF8.self)
            let id = try EventValidator.validate(frames[5], stage: "in").envelope.id
            if idBySeq[seq] != id { mismatches.append("\(seq): \(id) != \(idBySeq[seq] ?? "-")") }
            if seen % 500 == 0 { try consumer.send("ACK", [Array("live".utf8), frames[3]]) }
        }
        #expect(seen == 2_000)
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }
}
