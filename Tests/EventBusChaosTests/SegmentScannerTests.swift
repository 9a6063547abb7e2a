import EventBusBroker
import EventBusChaos
import Foundation
import Logging
import Testing

/// The campaign reads the log with a reader of its own: it must read what the broker's
/// ``SegmentLog`` writes, and stop where a torn tail starts.
struct SegmentScannerTests {
    static func withLog(_ body: (String, SegmentLog) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chaos-scan-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = try SegmentLog(directory: directory, logger: Logger(label: "test"))
        defer { log.close() }
        try body(directory + "/log", log)
    }

    static func pending(_ n: Int) -> PendingRecord {
        PendingRecord(topic: Array("in/messaging:a/message.read".utf8), source: Array("/chat-api".utf8), id: Array("e\(n)".utf8),
                      event: Array(#"{"n":\#(n)}"#.utf8))
    }

    @Test func readsWhatTheBrokersLogWrote() throws {
        try Self.withLog { directory, log in
            _ = try log.append((1...3).map(Self.pending), timestamp: 1)
            _ = try log.append([Self.pending(4)], timestamp: 2)
            try log.sync()
            let records = try SegmentScanner.records(in: directory)
            #expect(records.map(\.seq) == [1, 2, 3, 4])
            #expect(records.map(\.id) == ["e1", "e2", "e3", "e4"])
            #expect(records[3] == LoggedRecord(seq: 4, topic: "in/messaging:a/message.read", source: "/chat-api", id: "e4", event: Array(#"{"n":4}"#.utf8)))
            #expect(records[3].stage == "in" && records[3].subject == "messaging:a" && records[3].type == "message.read")
        }
    }

    @Test func stopsAtATornRecord() throws {
        try Self.withLog { directory, log in
            _ = try log.append((1...3).map(Self.pending), timestamp: 1)
            try log.sync()
            let path = try #require(try SegmentScanner.segmentPaths(in: directory).last)
            var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            let whole = SegmentScanner.contents(of: bytes)
            #expect(whole.extents.map(\.seq) == [1, 2, 3] && whole.trailingBytes == 0)
            bytes.removeLast(5)
            let torn = SegmentScanner.contents(of: bytes)
            #expect(torn.records.map(\.seq) == [1, 2])
            #expect(torn.trailingBytes == whole.extents[2].end - whole.extents[2].start - 5)
            bytes[whole.extents[1].start + 40] ^= 0xFF  // a flipped byte in record 2: its CRC fails
            #expect(SegmentScanner.contents(of: bytes).records.map(\.seq) == [1])
        }
    }
}
