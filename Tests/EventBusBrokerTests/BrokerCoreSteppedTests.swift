import EventBus
import Foundation
import Logging
import Testing
import ZeroMQ

@testable import EventBusBroker

/// The broker's core driven step by step, for what its loop never shows from
/// outside: consumers never get an event before the commit that covers it (the
/// loop appends, commits, then feeds consumers; a feed between an append and its
/// commit must send nothing of it, architecture.md "Commit"), and the peers that
/// asked for HELLO options are pruned.
@Suite struct BrokerCoreSteppedTests {
    /// A broker core on a fresh directory, driven step by step from the test's thread as its loop would drive it.
    static func core(_ directory: String) throws -> BrokerCore {
        var config = BrokerConfig()
        config.dataDirectory = directory
        config.commandEndpoint = "tcp://127.0.0.1:*"
        config.streamEndpoint = "tcp://127.0.0.1:*"
        var logger = Logger(label: "test.visibility")
        logger.logLevel = .warning
        return try BrokerCore(config: config, logger: logger)
    }

    static func directory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-core-\(UUID().uuidString)").path
    }

    @Test func aFeedBetweenAnAppendAndItsCommitSendsNothingOfIt() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let core = try Self.core(directory)
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
        core.syncWorker?.stop()
        core.log.close()
    }

    /// Under `--fsync always` the loop hands a commit's fsync to the sync worker
    /// and goes on: a PUB that arrives meanwhile is appended but neither
    /// confirmed nor visible until a later fsync covers it, and that fsync
    /// starts as soon as the first completes.
    @Test func aPubArrivingDuringAnFsyncWaitsForTheNextCommit() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let core = try Self.core(directory)
        let worker = try #require(core.syncWorker)
        let context = try Context()
        let peer = try Socket(context: context, type: .dealer)
        defer { peer.close() }
        let peerID = Array("async-peer".utf8)
        try peer.setRoutingID(peerID)
        try peer.setLinger(0)
        try peer.setReceiveTimeout(300)
        try peer.connect(core.commandEndpoint)
        Thread.sleep(forTimeInterval: 0.2)  // the ROUTER knows the peer once the connection is up

        func pub(_ correlation: String, _ id: String) {
            let event = String(decoding: Events.read(message: "m1", id: id), as: UTF8.self)
            core.handle([peerID, WireProtocol.signature, Array("PUB".utf8), Array(correlation.utf8), Array("in".utf8), Array(event.utf8)])
        }
        /// The correlation ids of the OKs the peer has.
        func confirmed() throws -> [String] {
            var correlations: [String] = []
            while let frames = try peer.receive() {
                if frames[1] == Array("OK".utf8) { correlations.append(String(decoding: frames[2], as: UTF8.self)) }
            }
            return correlations
        }
        /// Waits for the worker's wake-up, then lets the core complete what it finished.
        func finish() throws {
            var poller = Poller()
            poller.add(fileDescriptor: worker.wakeup.fileDescriptor)
            guard try poller.poll(timeoutMilliseconds: 10_000)[0].contains(.readable) else {
                Issue.record("no fsync completed within 10 s")
                return
            }
            core.finishCommits()
        }

        pub("first", "e1")
        core.advanceCommit()
        #expect(core.committing?.head == 1)
        pub("second", "e2")
        core.advanceCommit()  // one fsync at a time: the second waits
        #expect(core.committing?.head == 1)
        #expect(core.log.headSeq == 2)
        #expect(core.visibleSeq == 0)

        try finish()
        #expect(try confirmed() == ["first"])
        #expect(core.visibleSeq == 1)
        // The second's fsync started as the first completed.
        #expect(core.committing?.head == 2)

        try finish()
        #expect(try confirmed() == ["second"])
        #expect(core.visibleSeq == 2)
        #expect(core.log.durableSeq == 2)
        #expect(core.committing == nil)
        worker.stop()
        core.log.close()
    }

    /// ZeroMQ does not say when a peer leaves, so the peers that asked for a HELLO
    /// option are pruned at 10,000 to those with an attached consumer.
    @Test func peersWithAHelloOptionArePrunedAtTenThousandToThoseOfAttachedConsumers() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let core = try Self.core(directory)
        let attached = Array("attached".utf8)
        let consumer = ConsumerState(name: "reader", acked: 0)
        consumer.peer = attached
        core.consumers["reader"] = consumer
        var peers: Set<[UInt8]> = []
        core.remember(attached, true, in: &peers)
        for n in 0..<9_999 { core.remember(Array("gone-\(n)".utf8), true, in: &peers) }
        #expect(peers.count == 10_000)
        core.remember(Array("new".utf8), true, in: &peers)
        #expect(peers == [attached, Array("new".utf8)])
        core.remember(Array("new".utf8), false, in: &peers)
        #expect(peers == [attached])
        core.syncWorker?.stop()
        core.log.close()
    }
}
