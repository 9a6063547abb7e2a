import Foundation
import Testing

@testable import EventBusBroker

@Suite("SegmentLog: append, read, reopen")
struct LogTests {
    @Test func newLogIsEmptyAndStartsAtSeqOne() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            #expect(log.headSeq == 0)
            #expect(log.firstSeq == 1)
            #expect(log.durableSeq == 0)
            #expect(log.segmentCount == 1)
            #expect(try segmentFiles(dir) == ["00000000000000000001.seg"])
            #expect(try log.read(seq: 0) == nil)
            #expect(try log.read(seq: 1) == nil)
            log.close()
        }
    }

    @Test func appendedRecordsReadBackWithContiguousSeqsFromOne() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            let first = try log.append((1...3).map { testRecord($0) }, timestamp: 1_000)
            let second = try log.append([testRecord(4)], timestamp: 2_000)
            #expect(first == 1...3)
            #expect(second == 4...4)
            #expect(log.headSeq == 4)
            for n in 1...4 {
                #expect(matches(try log.read(seq: UInt64(n)), testRecord(n), seq: UInt64(n)))
            }
            #expect(try log.read(seq: 1)?.timestamp == 1_000)
            #expect(try log.read(seq: 4)?.timestamp == 2_000)
            log.close()
        }
    }

    @Test func readOutsideFirstSeqThroughHeadSeqIsNil() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            try log.append([testRecord(1), testRecord(2)], timestamp: 1)
            #expect(try log.read(seq: 0) == nil)
            #expect(try log.read(seq: 3) == nil)
            #expect(try log.read(seq: .max) == nil)
            log.close()
        }
    }

    @Test func recordsAreReadableBeforeAndAfterFlush() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            try log.append([testRecord(1)], timestamp: 1)
            #expect(matches(try log.read(seq: 1), testRecord(1), seq: 1))
            try log.flush()
            try log.append([testRecord(2)], timestamp: 1)
            #expect(matches(try log.read(seq: 1), testRecord(1), seq: 1))
            #expect(matches(try log.read(seq: 2), testRecord(2), seq: 2))
            log.close()
        }
    }

    @Test func emptyFieldsRoundTrip() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            let empty = PendingRecord(topic: [], source: [], id: [], event: [])
            try log.append([empty], timestamp: 7)
            try log.flush()
            #expect(matches(try log.read(seq: 1), empty, seq: 1))
            log.close()
        }
    }

    @Test func emptyBatchIsRejectedAndAppendsNothing() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            #expect(throws: LogError.self) { try log.append([], timestamp: 1) }
            #expect(log.headSeq == 0)
            log.close()
        }
    }

    @Test func topicOverFieldLimitIsRejectedAndAppendsNothing() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            var big = testRecord(2)
            big.topic = [UInt8](repeating: 65, count: 70_000)
            do {
                try log.append([testRecord(1), big], timestamp: 1)
                Issue.record("an oversized topic was accepted")
            } catch let error as LogError {
                #expect(error.kind == .invalidRecord)
            }
            #expect(log.headSeq == 0)
            #expect(try log.append([testRecord(1)], timestamp: 1) == 1...1)
            log.close()
        }
    }

    @Test func reopenAfterCloseFindsEveryRecord() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            for n in stride(from: 1, through: 1_000, by: 10) {
                try log.append((n..<n + 10).map { testRecord($0) }, timestamp: UInt64(n))
            }
            log.close()

            let reopened = try SegmentLog(directory: dir, logger: quietLogger)
            #expect(reopened.headSeq == 1_000)
            #expect(reopened.firstSeq == 1)
            #expect(reopened.durableSeq == 1_000)
            #expect(reopened.recovery.records == 1_000)
            #expect(reopened.recovery.truncatedBytes == 0)
            #expect(reopened.recovery.reason == nil)
            for n in [1, 500, 1_000] {
                #expect(matches(try reopened.read(seq: UInt64(n)), testRecord(n), seq: UInt64(n)))
            }
            #expect(try reopened.append([testRecord(1_001)], timestamp: 1) == 1_001...1_001)
            reopened.close()
        }
    }

    @Test func flushedRecordsSurviveACrashWithoutClose() throws {
        try withTemporaryDirectory { dir in
            let crashed = dir + "/crashed"
            let log = try SegmentLog(directory: dir + "/live", logger: quietLogger)
            try log.append((1...100).map { testRecord($0) }, timestamp: 1)
            try log.flush()
            try log.append([testRecord(101)], timestamp: 1)  // buffered only: a crash loses it
            // The files as a SIGKILL would leave them, taken while the log is still open.
            try FileManager.default.copyItem(atPath: dir + "/live", toPath: crashed)
            log.close()

            let reopened = try SegmentLog(directory: crashed, logger: quietLogger)
            #expect(reopened.headSeq == 100)
            #expect(reopened.recovery.truncatedBytes == 0)
            #expect(matches(try reopened.read(seq: 100), testRecord(100), seq: 100))
            reopened.close()
        }
    }

    @Test func droppingTheLogWithoutCloseKeepsFlushedRecords() throws {
        try withTemporaryDirectory { dir in
            do {
                let log = try SegmentLog(directory: dir, logger: quietLogger)
                try log.append((1...5).map { testRecord($0) }, timestamp: 1)
                try log.flush()
            }
            let reopened = try SegmentLog(directory: dir, logger: quietLogger)
            #expect(reopened.headSeq == 5)
            reopened.close()
        }
    }

    @Test func syncMakesEverythingAppendedDurable() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            try log.append((1...10).map { testRecord($0) }, timestamp: 1)
            #expect(log.durableSeq == 0)
            try log.flush()
            #expect(log.durableSeq == 0)
            try log.sync()
            #expect(log.durableSeq == 10)
            log.close()
        }
    }

    @Test func scanVisitsEveryRecordInSeqOrderFromTheGivenSeq() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            try log.append((1...50).map { testRecord($0) }, timestamp: 1)
            try log.flush()
            try log.append((51...60).map { testRecord($0) }, timestamp: 1)  // still buffered
            var seen: [UInt64] = []
            try log.scan(from: 20) { record in
                #expect(matches(record, testRecord(Int(record.seq)), seq: record.seq))
                seen.append(record.seq)
                return true
            }
            #expect(seen == Array(20...60))
            log.close()
        }
    }

    @Test func scanFromBeforeFirstSeqStartsAtFirstSeqAndPastHeadVisitsNothing() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            try log.append((1...5).map { testRecord($0) }, timestamp: 1)
            var seen: [UInt64] = []
            try log.scan(from: 0) { seen.append($0.seq); return true }
            #expect(seen == [1, 2, 3, 4, 5])
            seen = []
            try log.scan(from: 6) { seen.append($0.seq); return true }
            #expect(seen.isEmpty)
            log.close()
        }
    }

    @Test func scanStopsWhenBodyReturnsFalse() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            try log.append((1...30).map { testRecord($0) }, timestamp: 1)
            try log.flush()
            try log.append((31...40).map { testRecord($0) }, timestamp: 1)
            var seen: [UInt64] = []
            try log.scan(from: 1) { seen.append($0.seq); return $0.seq < 10 }
            #expect(seen == Array(1...10))
            seen = []
            try log.scan(from: 31) { seen.append($0.seq); return $0.seq < 33 }
            #expect(seen == [31, 32, 33])
            log.close()
        }
    }

    @Test func largeBatchesAreWrittenOutWithoutExplicitFlush() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            // Over the 1 MiB buffer threshold.
            try log.append((1...4_000).map { testRecord($0) }, timestamp: 1)
            let path = dir + "/log/" + (try segmentFiles(dir)[0])
            #expect(try fileSize(path) > 1 << 20)
            log.close()
        }
    }

    @Test func useAfterCloseThrowsClosed() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            log.close()
            do {
                try log.append([testRecord(1)], timestamp: 1)
                Issue.record("append after close succeeded")
            } catch let error as LogError {
                #expect(error.kind == .closed)
            }
        }
    }
}
