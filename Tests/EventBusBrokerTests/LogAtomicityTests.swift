import Foundation
import Testing

@testable import EventBusBroker

@Suite("SegmentLog: a failed write leaves nothing behind")
struct LogAtomicityTests {
    @Test func failedWriteInsideAppendLeavesFileAndHeadSeqUnchanged() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            try log.append((1...10).map { testRecord($0) }, timestamp: 1)
            try log.flush()
            let path = dir + "/log/" + (try segmentFiles(dir)[0])
            let sizeBefore = try fileSize(path)

            // A batch over the 1 MiB buffer threshold is written by append itself; fail half-way.
            log.failNextWriteAfterBytes = 500_000
            let batch = (11...4_010).map { testRecord($0) }
            do {
                try log.append(batch, timestamp: 1)
                Issue.record("the failing append succeeded")
            } catch let error as LogError {
                #expect(error.kind == .io)
                #expect(error.errno == ENOSPC)
            }
            #expect(log.headSeq == 10)
            #expect(try fileSize(path) == sizeBefore)
            #expect(try log.read(seq: 11) == nil)

            #expect(try log.append([testRecord(11)], timestamp: 1) == 11...11)
            try log.sync()
            log.close()

            let reopened = try SegmentLog(directory: dir, logger: quietLogger)
            #expect(reopened.headSeq == 11)
            #expect(reopened.recovery.truncatedBytes == 0)
            #expect(matches(try reopened.read(seq: 11), testRecord(11), seq: 11))
            reopened.close()
        }
    }

    @Test func discardUnwrittenDropsABatchWhoseFlushFailed() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            try log.append((1...5).map { testRecord($0) }, timestamp: 1)
            try log.flush()
            try log.append((6...9).map { testRecord($0) }, timestamp: 1)
            log.failNextWriteAfterBytes = 100
            #expect(throws: LogError.self) { try log.flush() }
            #expect(log.discardUnwritten() == 4)
            #expect(log.headSeq == 5)
            #expect(try log.read(seq: 6) == nil)
            #expect(try log.append([testRecord(6)], timestamp: 1) == 6...6)
            try log.sync()
            log.close()

            let reopened = try SegmentLog(directory: dir, logger: quietLogger)
            #expect(reopened.headSeq == 6)
            #expect(matches(try reopened.read(seq: 6), testRecord(6), seq: 6))
            reopened.close()
        }
    }

    @Test func failedFlushCutsTheFileBackAndKeepsRecordsForTheNextFlush() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            try log.append((1...5).map { testRecord($0) }, timestamp: 1)
            try log.flush()
            let path = dir + "/log/" + (try segmentFiles(dir)[0])
            let sizeBefore = try fileSize(path)
            try log.append((6...10).map { testRecord($0) }, timestamp: 1)

            log.failNextWriteAfterBytes = 100
            #expect(throws: LogError.self) { try log.flush() }
            #expect(try fileSize(path) == sizeBefore)
            #expect(log.headSeq == 10)
            #expect(matches(try log.read(seq: 8), testRecord(8), seq: 8))

            try log.flush()
            #expect(try fileSize(path) > sizeBefore)
            log.close()
            let reopened = try SegmentLog(directory: dir, logger: quietLogger)
            #expect(reopened.headSeq == 10)
            #expect(reopened.recovery.truncatedBytes == 0)
            reopened.close()
        }
    }

    @Test func failedWriteWhileRollingLeavesTheBatchOut() throws {
        try withTemporaryDirectory { dir in
            let size = testRecordSize(1)
            let log = try SegmentLog(
                directory: dir, options: LogOptions(segmentBytes: 16 + 3 * size), logger: quietLogger)
            try log.append((1...3).map { testRecord($0) }, timestamp: 1)  // buffered, segment full
            log.failNextWriteAfterBytes = 10  // the roll must write them first
            #expect(throws: LogError.self) { try log.append([testRecord(4)], timestamp: 1) }
            #expect(log.headSeq == 3)
            #expect(log.segmentCount == 1)
            #expect(try log.append([testRecord(4)], timestamp: 1) == 4...4)
            #expect(log.segmentCount == 2)
            #expect(matches(try log.read(seq: 3), testRecord(3), seq: 3))
            log.close()
        }
    }
}
