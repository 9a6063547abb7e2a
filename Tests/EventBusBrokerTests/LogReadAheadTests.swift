import Foundation
import Testing

@testable import EventBusBroker

/// `SegmentLog.read(seq:)` reads ahead for readers that go in SEQ order (a
/// consumer catching up): the records are the same whatever the order, the
/// segment, the size, and whatever was appended or removed since.
@Suite("SegmentLog: read-ahead")
struct LogReadAheadTests {
    @Test func recordsReadInAnyOrderAcrossReadAheadsAndSegmentsAreThoseAppended() throws {
        try withTemporaryDirectory { dir in
            // About 1.3 MB of records in segments of 200 KiB: several read-aheads, each cut by a segment's end.
            let options = LogOptions(segmentBytes: 200 * 1024)
            let log = try SegmentLog(directory: dir, options: options, logger: quietLogger)
            for n in stride(from: 1, through: 4_000, by: 100) {
                try log.append((n..<n + 100).map { testRecord($0) }, timestamp: 1)
                try log.flush()
            }
            #expect(log.segmentCount > 5)
            for seq in 1...4_000 {
                #expect(matches(try log.read(seq: UInt64(seq)), testRecord(seq), seq: UInt64(seq)))
            }
            for seq in stride(from: 4_000, through: 1, by: -7) {
                #expect(matches(try log.read(seq: UInt64(seq)), testRecord(seq), seq: UInt64(seq)))
            }
            log.close()
        }
    }

    @Test func aRecordLargerThanTheReadAheadIsReadWhole() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            let big = ReadAhead.capacity + 10_000
            try log.append([testRecord(1), testRecord(2, eventBytes: big), testRecord(3)], timestamp: 1)
            try log.flush()
            #expect(matches(try log.read(seq: 1), testRecord(1), seq: 1))
            #expect(matches(try log.read(seq: 2), testRecord(2, eventBytes: big), seq: 2))
            #expect(matches(try log.read(seq: 3), testRecord(3), seq: 3))
            log.close()
        }
    }

    @Test func recordsAppendedAfterAReadAheadAreReadFromTheFile() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            try log.append((1...10).map { testRecord($0) }, timestamp: 1)
            try log.flush()
            #expect(matches(try log.read(seq: 1), testRecord(1), seq: 1))  // holds 1...10
            try log.append((11...20).map { testRecord($0) }, timestamp: 1)
            try log.flush()
            for seq in 2...20 {
                #expect(matches(try log.read(seq: UInt64(seq)), testRecord(seq), seq: UInt64(seq)))
            }
            log.close()
        }
    }

    @Test func afterRetentionRemovesTheSegmentHeldAheadItsRecordsAreGoneAndTheRestReadOn() throws {
        try withTemporaryDirectory { dir in
            let segmentOf3 = 16 + 3 * testRecordSize(1)
            let log = try SegmentLog(directory: dir, options: LogOptions(segmentBytes: segmentOf3, retentionBytes: 1),
                                     logger: quietLogger)
            try log.append((1...3).map { testRecord($0) }, timestamp: 1)
            try log.append((4...6).map { testRecord($0) }, timestamp: 1)
            try log.flush()
            #expect(matches(try log.read(seq: 1), testRecord(1), seq: 1))  // holds segment 1
            #expect(try log.enforceRetention(now: 2) >= 1)
            #expect(try log.read(seq: 2) == nil)
            #expect(matches(try log.read(seq: log.firstSeq), testRecord(Int(log.firstSeq)), seq: log.firstSeq))
            log.close()
        }
    }
}
