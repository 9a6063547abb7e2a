import EventBus
import Foundation
import Logging
import Testing
import ZeroMQ

@testable import EventBusBroker

/// Consumers never get an event before the commit that covers it: the broker's
/// loop appends, commits, then feeds consumers, and a feed between an append
/// and its commit must send nothing of it (architecture.md, "Commit").
@Suite struct CommitVisibilityTests {
    @Test func aFeedBetweenAnAppendAndItsCommitSendsNothingOfIt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-visibility-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var config = BrokerConfig()
        config.dataDirectory = directory
        config.commandEndpoint = "tcp://127.0.0.1:*"
        config.streamEndpoint = "tcp://127.0.0.1:*"
        var logger = Logger(label: "test.visibility")
        logger.logLevel = .warning
        // The core is driven step by step from this thread, as its loop would drive it.
        let core = try BrokerCore(config: config, logger: logger)
        let context = try Context()
        let peer = try Socket(context: context, type: .dealer)
        defer { peer.close() }
        let peerID = Array("visibility-peer".utf8)
        try peer.setRoutingID(peerID)
        try peer.setLinger(0)
        try peer.setReceiveTimeout(300)
        try peer.connect(core.commandEndpoint)
        Thread.sleep(forTimeInterval: 0.2)  // the ROUTER knows the peer once the connection is up

        func command(_ verb: String, _ arguments: [String]) -> [[UInt8]] {
            [peerID, WireProtocol.signature, Array(verb.utf8), Array("c-\(verb)".utf8)] + arguments.map { Array($0.utf8) }
        }
        /// Every message the peer has, as (verb, last frame).
        func drain() throws -> [(verb: String, last: String)] {
            var messages: [(String, String)] = []
            while let frames = try peer.receive() {
                messages.append((String(decoding: frames[1], as: UTF8.self), String(decoding: frames.last ?? [], as: UTF8.self)))
            }
            return messages
        }

        core.handle(command("CONSUME", ["reader", "earliest", "10", "in/"]))
        #expect(try drain().map(\.verb) == ["OK"])
        let event = String(decoding: Events.read(message: "m1"), as: UTF8.self)
        core.handle(command("PUB", ["in", event]))
        #expect(core.log.headSeq == 1)
        #expect(core.visibleSeq == 0)

        // Appended, not committed: neither its OK nor the event goes out.
        core.pumpConsumers()
        #expect(try drain().isEmpty)

        core.commit()
        core.pumpConsumers()
        let after = try drain()
        #expect(after.map(\.verb) == ["OK", "EVT"])
        #expect(after.first?.last == "1")
        #expect(core.visibleSeq == 1)
        core.log.close()
    }
}
