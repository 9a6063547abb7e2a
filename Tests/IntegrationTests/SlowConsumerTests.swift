import Foundation
import Testing
import ZeroMQ

/// A slow plugin holds its stage back, not the broker's memory: credit bounds
/// what is sent, the cache bounds what is kept, and nothing is missed.
@Suite(.serialized) struct SlowConsumerTests {
    static func residentBytes(of pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    static func event(_ n: Int, padding: String) -> [UInt8] {
        Array(#"{"specversion":"1.0","id":"s\#(n)","source":"/slow-test","type":"message.read","subject":"messaging:general","time":"2026-11-22T03:10:00.123Z","data":{"cid":"messaging:general","user_id":"bob","message_id":"m\#(n)","pad":"\#(padding)"}}"#.utf8)
    }

    @Test func aSlowConsumerKeepsBrokerMemoryFlatAndMissesNothingWhenItCatchesUp() throws {
        let context = try Context()
        let broker = try BrokerProcess(arguments: ["--pipeline", "slow", "--cache-mb", "8", "--log-level", "warning"])
        try broker.start(context: context)
        defer { broker.terminate() }
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
        let baseline = Self.residentBytes(of: pid)
        try publish(10_000..<60_000)  // 50,000 more events: about 100 MB
        let after = Self.residentBytes(of: pid)
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
