import EventBusTesting
import Foundation
import Logging
import Testing

@testable import EventBusBroker

@Suite("SegmentLog: recovery on open")
struct LogRecoveryTests {
    /// Writes records 1...count into a closed log in `dir`; returns the path of its last segment.
    func makeLog(_ dir: String, count: Int, options: LogOptions = .init()) throws -> String {
        let log = try SegmentLog(directory: dir, options: options, logger: quietLogger)
        for n in 1...count { try log.append([testRecord(n)], timestamp: UInt64(n)) }
        log.close()
        return dir + "/log/" + (try segmentFiles(dir).last ?? "")
    }

    func setSize(_ path: String, _ size: Int) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
    }

    @Test func tornLastRecordIsTruncatedOnOpen() throws {
        try withTemporaryDirectory { dir in
            let path = try makeLog(dir, count: 10)
            let size = try fileSize(path)
            try setSize(path, size - 5)

            let capture = CapturingLogHandler()
            let log = try SegmentLog(directory: dir, logger: Logger(label: "test") { _ in capture })
            #expect(log.headSeq == 9)
            #expect(log.recovery.records == 9)
            #expect(log.recovery.truncatedBytes == UInt64(testRecordSize(10) - 5))
            #expect(log.recovery.truncatedSegment == "00000000000000000001.seg")
            #expect(log.recovery.reason != nil)
            #expect(try fileSize(path) == size - testRecordSize(10))
            let warning = capture.entries.first { $0.level == .warning }
            #expect(warning?.metadata["log.truncated_bytes"] == "\(testRecordSize(10) - 5)")

            #expect(try log.append([testRecord(10)], timestamp: 1) == 10...10)
            try log.flush()
            #expect(matches(try log.read(seq: 10), testRecord(10), seq: 10))
            log.close()
            let again = try SegmentLog(directory: dir, logger: quietLogger)
            #expect(again.headSeq == 10)
            #expect(again.recovery.truncatedBytes == 0)
            again.close()
        }
    }

    @Test func tornRecordHeaderIsTruncatedOnOpen() throws {
        try withTemporaryDirectory { dir in
            let path = try makeLog(dir, count: 3)
            let size = try fileSize(path)
            let handle = try #require(FileHandle(forWritingAtPath: path))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data([0x40, 0x01, 0x00]))  // three bytes of a next length field
            try handle.close()

            let log = try SegmentLog(directory: dir, logger: quietLogger)
            #expect(log.headSeq == 3)
            #expect(log.recovery.truncatedBytes == 3)
            #expect(try fileSize(path) == size)
            log.close()
        }
    }

    @Test func flippedByteInLastRecordIsTruncatedOnOpen() throws {
        try withTemporaryDirectory { dir in
            let path = try makeLog(dir, count: 10)
            let size = try fileSize(path)
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            bytes[size - 20] ^= 0x01  // inside record 10's event: the CRC no longer matches
            try bytes.write(to: URL(fileURLWithPath: path))

            let log = try SegmentLog(directory: dir, logger: quietLogger)
            #expect(log.headSeq == 9)
            #expect(log.recovery.truncatedBytes == UInt64(testRecordSize(10)))
            #expect(log.recovery.reason?.contains("CRC32C") == true)
            #expect(try fileSize(path) == size - testRecordSize(10))
            #expect(try log.append([testRecord(10)], timestamp: 1) == 10...10)
            log.close()
        }
    }

    @Test func flippedByteInAMiddleRecordOfTheLastSegmentTruncatesFromThere() throws {
        try withTemporaryDirectory { dir in
            let path = try makeLog(dir, count: 10)
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            let fifth = 16 + 4 * testRecordSize(1) + 40
            bytes[fifth] ^= 0xFF
            try bytes.write(to: URL(fileURLWithPath: path))

            let log = try SegmentLog(directory: dir, logger: quietLogger)
            #expect(log.headSeq == 4)
            #expect(try log.read(seq: 5) == nil)
            log.close()
        }
    }

    @Test func emptyFileOfANewSegmentIsRepairedOnOpen() throws {
        try withTemporaryDirectory { dir in
            let options = LogOptions(segmentBytes: 16 + 2 * testRecordSize(1))
            let path = try makeLog(dir, count: 4, options: options)
            #expect(path.hasSuffix("00000000000000000003.seg"))
            // A crash right after creating the next segment, before its header reached the disk.
            #expect(FileManager.default.createFile(atPath: dir + "/log/00000000000000000005.seg", contents: Data()))

            let log = try SegmentLog(directory: dir, options: options, logger: quietLogger)
            #expect(log.headSeq == 4)
            #expect(log.segmentCount == 2)
            #expect(try segmentFiles(dir) == ["00000000000000000001.seg", "00000000000000000003.seg"])
            #expect(try log.append([testRecord(5)], timestamp: 1) == 5...5)
            log.close()
        }
    }

    @Test func breakInAnOlderSegmentEndsTheLogAndSetsLaterSegmentsAside() throws {
        try withTemporaryDirectory { dir in
            let options = LogOptions(segmentBytes: 16 + 2 * testRecordSize(1))
            _ = try makeLog(dir, count: 6, options: options)
            let middle = dir + "/log/00000000000000000003.seg"
            try setSize(middle, try fileSize(middle) - 1)

            let log = try SegmentLog(directory: dir, options: options, logger: quietLogger)
            #expect(log.headSeq == 3)
            #expect(log.recovery.truncatedSegment == "00000000000000000003.seg")
            #expect(try segmentFiles(dir) == ["00000000000000000001.seg", "00000000000000000003.seg"])
            #expect(FileManager.default.fileExists(atPath: dir + "/log/00000000000000000005.seg.discarded"))
            #expect(try log.append([testRecord(4)], timestamp: 1) == 4...4)
            #expect(matches(try log.read(seq: 4), testRecord(4), seq: 4))
            log.close()
        }
    }

    @Test func cleanOpenReportsNoTruncation() throws {
        try withTemporaryDirectory { dir in
            _ = try makeLog(dir, count: 3)
            let capture = CapturingLogHandler()
            let log = try SegmentLog(directory: dir, logger: Logger(label: "test") { _ in capture })
            #expect(log.recovery == LogRecovery(
                segments: 1, records: 3, truncatedBytes: 0, truncatedSegment: nil, reason: nil))
            #expect(!capture.entries.contains { $0.level >= .warning })
            log.close()
        }
    }
}
