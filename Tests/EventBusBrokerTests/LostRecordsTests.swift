import EventBus
import EventBusBroker
import Foundation
import Logging
import Testing

/// Issue 15, hole 3: a log that lost records mid-log (a flipped byte found on open) while a
/// consumer had already acknowledged past them is not served, and `eventbus recover` lets
/// the broker continue without giving any SEQ twice.
@Suite(.serialized) struct LostRecordsTests {
    static var logger: Logger {
        var logger = Logger(label: "test.lost")
        logger.logLevel = .critical
        return logger
    }

    /// Publishes `count` events, consumes and ACKs them all as consumer `c`, stops the broker.
    static func seenLog(_ count: Int) throws -> TestBroker {
        let bus = try TestBroker()
        let peer = try bus.peer()
        let events = (0..<count).map { Events.read(message: "m\($0)") }
        #expect(try peer.call("PUB", [Array("in".utf8)] + events).values.count == count)
        #expect(try peer.call("CONSUME", ["c", "earliest", "100", "in/"]).isOK)
        var last = ""
        while last != "\(count)", let (seq, _) = try ConsumerTests.nextEvent(peer) { last = seq }
        try peer.send("ACK", [Array("c".utf8), Array("\(count)".utf8)])
        // The ACK has no reply: a PING behind it on the same connection is answered after it.
        #expect(try peer.call("PING").isOK)
        bus.stop()  // saves the offsets
        return bus
    }

    /// Flips one byte inside record `seq` of the only segment (records of equal size).
    static func damage(_ directory: String, seq: Int, of count: Int) throws {
        let logDirectory = directory + "/log"
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: logDirectory).first { $0.hasSuffix(".seg") })
        let url = URL(fileURLWithPath: logDirectory + "/" + name)
        var bytes = try Data(contentsOf: url)
        let recordSize = (bytes.count - 16) / count
        bytes[16 + (seq - 1) * recordSize + recordSize / 2] ^= 0xFF
        try bytes.write(to: url)
    }

    @Test func aMidLogCutBelowAnAckStopsTheBrokerAndRecoverNeverReusesASeq() throws {
        let bus = try Self.seenLog(10)
        try Self.damage(bus.directory, seq: 5, of: 10)

        // Refused, naming the consumer that saw more and the way out.
        do {
            _ = try Broker(config: bus.config, logger: Self.logger)
            Issue.record("the broker served a log that lost acknowledged records")
        } catch let error as LogError {
            #expect(error.message.contains("ends at SEQ 4"), "\(error.message)")
            #expect(error.message.contains("consumer c at SEQ 10"), "\(error.message)")
            #expect(error.message.contains("eventbus recover --data-dir \(bus.directory)"), "\(error.message)")
        }

        let outcome = try LostRecords.recover(dataDirectory: bus.directory, logger: Self.logger)
        #expect(outcome.marked == 5...10)
        #expect(outcome.headSeq == 10)
        // A second run finds nothing to do.
        #expect(try LostRecords.recover(dataDirectory: bus.directory, logger: Self.logger).marked == nil)

        let again = try TestBroker(directory: bus.directory, configure: { $0 = bus.config })
        let peer = try again.peer()
        let reply = try peer.call("PUB", [Array("in".utf8), Events.read(message: "after")])
        #expect(reply.values == ["11"], "a new event took SEQ \(reply.values), which consumers had passed")
        #expect(try peer.call("CONSUME", ["c", "resume", "100", "in/"]).values == ["11"])
        #expect(try ConsumerTests.nextEvent(peer)?.seq == "11")
        // The markers are on diag, one per lost SEQ.
        #expect(try peer.call("CONSUME", ["d", "earliest", "100", "diag/"]).isOK)
        var lost: [String] = []
        while lost.count < 6, let (seq, topic) = try ConsumerTests.nextEvent(peer) {
            #expect(topic == "diag/log/log.records_lost")
            lost.append(seq)
        }
        #expect(lost == ["5", "6", "7", "8", "9", "10"])
        again.stop()
    }

    @Test func aCutThatNothingHadSeenIsServedAsBefore() throws {
        let bus = try TestBroker()
        let peer = try bus.peer()
        let events = (0..<10).map { Events.read(message: "m\($0)") }
        #expect(try peer.call("PUB", [Array("in".utf8)] + events).values.count == 10)
        bus.stop()
        try Self.damage(bus.directory, seq: 8, of: 10)
        let again = try TestBroker(directory: bus.directory, configure: { $0 = bus.config })
        #expect(try again.peer().call("PUB", [Array("in".utf8), Events.read(message: "x")]).values == ["8"])
        again.stop()
    }

    @Test func aPluginSnapshotPastTheLogsEndIsAReferenceToo() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-refs-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/plugins/receipt-reducer", withIntermediateDirectories: true)
        var snapshot = Array("EBSNAP1\n".utf8)
        for index in 0..<8 { snapshot.append(UInt8(truncatingIfNeeded: UInt64(1234) >> (8 * UInt64(index)))) }
        snapshot += [UInt8](repeating: 0, count: 12)
        try Data(snapshot).write(to: URL(fileURLWithPath: directory + "/plugins/receipt-reducer/state.snapshot"))
        let references = LogReferences(offsets: ["read-privacy": 7], dataDirectory: directory)
        #expect(references.highestSeq == 1234)
        #expect(references.beyond(7).map(\.description) == ["the snapshot of plugin receipt-reducer at SEQ 1234"])
        let recovery = LogRecovery(segments: 1, records: 7, truncatedBytes: 0, truncatedSegment: nil, reason: nil)
        #expect(references.refusal(headSeq: 1234, dataDirectory: directory, recovery: recovery) == nil)
        let refusal = try #require(references.refusal(headSeq: 7, dataDirectory: directory, recovery: recovery))
        #expect(refusal.message.contains("SEQs 8…1234"), "\(refusal.message)")
    }

    @Test func recoverIsRefusedWhileABrokerServesTheDirectory() throws {
        let bus = try TestBroker()
        defer { bus.stop() }
        #expect(throws: LogError.self) { try LostRecords.recover(dataDirectory: bus.directory, logger: Self.logger) }
        #expect(throws: LogError.self) { try Broker(config: bus.config, logger: Self.logger) }
    }
}
