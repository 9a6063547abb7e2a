import EventBusTesting
import Foundation
import Testing
import ZeroMQ

/// A peer that sends and never reads its replies: the broker drops what it cannot queue
/// (counted in STATS), keeps its memory, and serves the others.
@Suite(.serialized) struct UnreadRepliesTests {
    @Test func aPeerThatNeverReadsItsRepliesCostsBoundedMemoryAndItsDropsAreCounted() async throws {
        let context = try Context()
        let broker = try BrokerProcess(arguments: ["--peer-hwm", "1000", "--log-level", "error"])
        try await broker.start(context: context)
        try await broker.terminateAfter {
            let pid = try #require(broker.process?.processIdentifier)
            let before = try HostileInputTests.status(of: pid, "VmRSS")

            let flooder = try Socket(context: context, type: .dealer)
            defer { flooder.close() }
            try flooder.setLinger(0)
            try flooder.setReceiveHighWaterMark(1)
            try flooder.setSendHighWaterMark(0)
            try flooder.connect(broker.commandEndpoint)
            // 200,000 PINGs with a 64-byte CORR: about 50 MB of replies if the broker kept them all.
            let corr = [UInt8](repeating: UInt8(ascii: "c"), count: 64)
            for _ in 0..<200_000 {
                _ = try flooder.send([Array("EB1".utf8), Array("PING".utf8), corr])
            }

            let client = try Socket(context: context, type: .dealer)
            defer { client.close() }
            try client.setLinger(0)
            try client.setReceiveTimeout(30_000)
            try client.connect(broker.commandEndpoint)
            // STATS answers after the broker has read what came before it from the flooder, or soon after.
            var dropped = 0
            let deadline = Date().addingTimeInterval(60)
            repeat {
                try client.send([Array("EB1".utf8), Array("STATS".utf8), Array("s".utf8)])
                let reply = try #require(try client.receive())
                let stats = try JSONSerialization.jsonObject(with: Data(reply.last ?? [])) as? [String: Any]
                dropped = stats?["dropped_replies"] as? Int ?? 0
                if dropped < 190_000 { try await Task.sleep(for: .milliseconds(200)) }  // a poll interval
            } while dropped < 190_000 && Date() < deadline
            #expect(dropped >= 190_000, "the replies the flooder did not read were dropped and counted")
            let peak = try HostileInputTests.status(of: pid, "VmHWM")
            #expect(peak - before < 24 * 1024 * 1024,
                    "broker peak memory grew \((peak - before) / 1_048_576) MB for a peer that never reads")
            try client.send([Array("EB1".utf8), Array("PING".utf8), Array("p".utf8)])
            #expect(try client.receive()?[1] == Array("OK".utf8))
        }
    }
}
