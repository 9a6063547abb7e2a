import EventBusTesting
import Foundation
import Testing
import ZeroMQ

/// A slow plugin holds its stage back, not the broker's memory: credit bounds
/// what is sent, the cache bounds what is kept, and nothing is missed.
@Suite(.serialized) struct SlowConsumerTests {
    static func residentBytes(of pid: Int32) throws -> Int { try ProcessStatus.bytes("VmRSS", of: pid) }

    static func event(_ n: Int, padding: String) -> [UInt8] {
        Array(#"{"specversion":"1.0","id":"s\#(n)","source":"/slow-test","type":"message.read","subject":"messaging:general","time":"2026-11-22T03:10:00.123Z","data":{"cid":"messaging:general","user_id":"bob","message_id":"m\#(n)","pad":"\#(padding)"}}"#.utf8)
    }

    @Test func aSlowConsumerKeepsBrokerMemoryFlatAndMissesNothingWhenItCatchesUp() async throws {
        let context = try Context()
        let broker = try BrokerProcess(arguments: ["--pipeline", "slow", "--cache-mb", "8", "--log-level", "warning"])
        try await broker.start(context: context)
        try await broker.terminateAfter {
            let pid = try #require(broker.process?.processIdentifier)

            // The slow plugin: attached with a credit of 20, and not reading yet.
            let slow = try Socket(context: context, type: .dealer)
            defer { slow.close() }
            try slow.setLinger(0)
            try slow.setReceiveTimeout(10_000)
            try slow.connect(broker.commandEndpoint)
            try slow.send([Array("EB1".utf8), Array("CONSUME".utf8), Array("c".utf8), Array("slow".utf8),
                           Array("earliest".utf8), Array("20".utf8), Array("in/".utf8)])

            let publisher = try Socket(context: context, type: .dealer)
            defer { publisher.close() }
            try publisher.setLinger(0)
            try publisher.setReceiveTimeout(30_000)
            try publisher.connect(broker.commandEndpoint)
            let padding = String(repeating: "x", count: 2_000)
            func publish(_ range: Range<Int>) throws {
                for start in stride(from: range.lowerBound, to: range.upperBound, by: 500) {
                    let events = (start..<min(range.upperBound, start + 500)).map { Self.event($0, padding: padding) }
                    try publisher.send([Array("EB1".utf8), Array("PUB".utf8), Array("p".utf8), Array("in".utf8)] + events)
                    let reply = try #require(try publisher.receive())
                    #expect(reply[1] == Array("OK".utf8))
                }
            }
            try publish(0..<10_000)
            let baseline = try Self.residentBytes(of: pid)
            try publish(10_000..<60_000)  // 50,000 more events: about 100 MB
            let after = try Self.residentBytes(of: pid)
            #expect(after - baseline < 48 * 1024 * 1024,
                    "broker memory grew \((after - baseline) / 1_048_576) MB while 100 MB waited for a slow consumer")

            // It catches up: every event, in order, exactly once.
            var next: UInt64 = 1
            var acked = 0
            while next <= 60_000, let frames = try slow.receive() {
                guard frames.count == 6, frames[1] == Array("EVT".utf8) else { continue }
                let seq = UInt64(String(decoding: frames[3], as: UTF8.self)) ?? 0
                #expect(seq == next)
                next += 1
                acked += 1
                if acked % 10 == 0 { try slow.send([Array("EB1".utf8), Array("ACK".utf8), Array("a".utf8), Array("slow".utf8), frames[3]]) }
            }
            #expect(next == 60_001)
        }
    }

    static func stats(_ socket: Socket) throws -> [String: Any] {
        try socket.send([Array("EB1".utf8), Array("STATS".utf8), Array("s".utf8)])
        let reply = try #require(try socket.receive())
        return try #require(try JSONSerialization.jsonObject(with: Data(reply.last ?? [])) as? [String: Any])
    }

    static func outEvent(_ n: Int, padding: String) -> [UInt8] {
        Array(#"{"specversion":"1.0","id":"o\#(n)","source":"/slow-test","type":"test.tick","subject":"messaging:general","data":{"pad":"\#(padding)"}}"#.utf8)
    }

    /// A stream subscriber that never reads fills its queue up to the high-water mark and then
    /// misses events: it alone, not the broker's memory and not the other subscribers; STATS counts it.
    @Test func aSubscriberThatNeverReadsMissesEventsAloneWithBrokerMemoryBoundedAndCounted() async throws {
        let context = try Context()
        let broker = try BrokerProcess(arguments: ["--stream-hwm", "1000", "--cache-mb", "8", "--log-level", "warning"])
        try await broker.start(context: context)
        try await broker.terminateAfter {
            let pid = try #require(broker.process?.processIdentifier)

            let stuck = try Socket(context: context, type: .sub)
            defer { stuck.close() }
            try stuck.setLinger(0)
            try stuck.setReceiveHighWaterMark(100)
            try stuck.connect(broker.streamEndpoint)
            try stuck.subscribe(Array("out/".utf8))
            let reader = try Socket(context: context, type: .sub)
            defer { reader.close() }
            try reader.setLinger(0)
            try reader.setReceiveHighWaterMark(0)
            try reader.setReceiveTimeout(10_000)
            try reader.connect(broker.streamEndpoint)
            try reader.subscribe(Array("out".utf8))

            let publisher = try Socket(context: context, type: .dealer)
            defer { publisher.close() }
            try publisher.setLinger(0)
            try publisher.setReceiveTimeout(30_000)
            try publisher.connect(broker.commandEndpoint)
            let subscribed = Date().addingTimeInterval(10)
            while try Self.stats(publisher)["stream_subscriptions"] as? Int != 2 && Date() < subscribed {
                try await Task.sleep(for: .milliseconds(50))  // a poll interval
            }
            #expect(try Self.stats(publisher)["stream_overflows"] as? Int == 0)

            let padding = String(repeating: "x", count: 2_000)
            var received: [UInt64] = []
            func read(dontWait: Bool) throws -> Bool {
                guard let frames = try reader.receive(dontWait: dontWait) else { return false }
                if frames.count == 3, frames[1].count == 8 {
                    received.append(frames[1].reduce(0) { $0 << 8 | UInt64($1) })
                }
                return true
            }
            func publish(_ range: Range<Int>) throws {
                for start in stride(from: range.lowerBound, to: range.upperBound, by: 500) {
                    let events = (start..<min(range.upperBound, start + 500)).map { Self.outEvent($0, padding: padding) }
                    try publisher.send([Array("EB1".utf8), Array("PUB".utf8), Array("p".utf8), Array("out".utf8)] + events)
                    let reply = try #require(try publisher.receive())
                    #expect(reply[1] == Array("OK".utf8))
                    // The reader keeps up: it has this batch before the next one is sent.
                    while received.count < start + events.count, try read(dontWait: false) {}
                }
            }
            // The warm-up lands identities all over the dedup table, which is sized for the
            // window's minimum (1,000,000) at start and taken from the system page by page as
            // it is first written: by 20,000 events every page of it is (docs/operations.md).
            try publish(0..<20_000)
            let baseline = try Self.residentBytes(of: pid)
            try publish(20_000..<60_000)  // 40,000 more events: about 80 MB
            let after = try Self.residentBytes(of: pid)
            #expect(after - baseline < 32 * 1024 * 1024,
                    "broker memory grew \((after - baseline) / 1_048_576) MB while a subscriber did not read 80 MB")

            // The subscriber that reads got every event, in order: the stuck one held nobody back.
            while received.count < 60_000, try read(dontWait: false) {}
            #expect(received.count == 60_000)
            #expect(received == Array(1...60_000))
            let overflows = try Self.stats(publisher)["stream_overflows"] as? Int ?? 0
            #expect(overflows >= 1, "the stuck subscriber's overflow is counted in STATS")
            #expect(overflows < 60_000)
        }
    }
}
