import Foundation
import Testing

@testable import EventBusBroker

@Suite("SegmentLog: retention")
struct LogRetentionTests {
    let segmentOf3 = 16 + 3 * testRecordSize(1)

    @Test func retentionByBytesRemovesOldestWholeSegmentsAndMovesFirstSeq() throws {
        try withTemporaryDirectory { dir in
            // Records 10...12 have a longer id, so two segments take a little over 2 * segmentOf3.
            let limit = UInt64(2 * segmentOf3 + 10)
            let options = LogOptions(segmentBytes: segmentOf3, retentionBytes: limit)
            let log = try SegmentLog(directory: dir, options: options, logger: quietLogger)
            for n in stride(from: 1, through: 12, by: 3) {
                try log.append((n..<n + 3).map { testRecord($0) }, timestamp: 1)
            }
            #expect(log.segmentCount == 4)
            #expect(try log.enforceRetention(now: 2) == 2)
            #expect(log.segmentCount == 2)
            #expect(log.firstSeq == 7)
            #expect(log.totalBytes <= limit)
            #expect(log.totalBytes > limit - UInt64(segmentOf3))
            #expect(try segmentFiles(dir) == ["00000000000000000007.seg", "00000000000000000010.seg"])
            #expect(try log.read(seq: 6) == nil)
            #expect(matches(try log.read(seq: 7), testRecord(7), seq: 7))
            var seen: [UInt64] = []
            try log.scan(from: 1) { seen.append($0.seq); return true }
            #expect(seen == Array(7...12))
            log.close()
        }
    }

    @Test func retentionByBytesNeverRemovesTheActiveSegment() throws {
        try withTemporaryDirectory { dir in
            let options = LogOptions(segmentBytes: segmentOf3, retentionBytes: 1)
            let log = try SegmentLog(directory: dir, options: options, logger: quietLogger)
            try log.append((1...5).map { testRecord($0) }, timestamp: 1)
            #expect(try log.enforceRetention(now: 2) == 0)
            try log.append([testRecord(6)], timestamp: 1)
            #expect(try log.enforceRetention(now: 2) == 1)
            #expect(log.segmentCount == 1)
            #expect(log.firstSeq == 6)
            #expect(log.headSeq == 6)
            log.close()
        }
    }

    @Test func retentionByAgeRemovesSegmentsWhoseNewestRecordIsTooOld() throws {
        try withTemporaryDirectory { dir in
            let options = LogOptions(segmentBytes: segmentOf3, retentionAge: 60)
            let log = try SegmentLog(directory: dir, options: options, logger: quietLogger)
            try log.append((1...3).map { testRecord($0) }, timestamp: 1_000)
            try log.append((4...5).map { testRecord($0) }, timestamp: 1_000)
            try log.append([testRecord(6)], timestamp: 50_000)  // newest of segment 4 is recent
            try log.append((7...9).map { testRecord($0) }, timestamp: 100_000)
            #expect(log.segmentCount == 3)
            // At 100 s: segment 1 (newest at 1 s) is past 60 s, segment 4 (newest 50 s) is not.
            #expect(try log.enforceRetention(now: 100_000) == 1)
            #expect(log.firstSeq == 4)
            #expect(try log.enforceRetention(now: 100_000) == 0)
            log.close()
        }
    }

    @Test func whenEveryRecordExpiresNumberingContinuesInAFreshSegmentAlsoAfterReopen() throws {
        try withTemporaryDirectory { dir in
            let options = LogOptions(segmentBytes: segmentOf3, retentionAge: 10)
            let log = try SegmentLog(directory: dir, options: options, logger: quietLogger)
            try log.append((1...3).map { testRecord($0) }, timestamp: 1_000)
            try log.append((4...5).map { testRecord($0) }, timestamp: 1_000)
            #expect(try log.enforceRetention(now: 60_000) == 2)
            #expect(log.segmentCount == 1)
            #expect(log.headSeq == 5)
            #expect(log.firstSeq == 6)
            #expect(try log.read(seq: 5) == nil)
            #expect(try segmentFiles(dir) == ["00000000000000000006.seg"])
            var seen = 0
            try log.scan(from: 0) { _ in seen += 1; return true }
            #expect(seen == 0)
            try log.sync()
            log.close()

            let reopened = try SegmentLog(directory: dir, options: options, logger: quietLogger)
            #expect(reopened.headSeq == 5)
            #expect(reopened.firstSeq == 6)
            #expect(try reopened.append([testRecord(6)], timestamp: 70_000) == 6...6)
            #expect(matches(try reopened.read(seq: 6), testRecord(6), seq: 6))
            reopened.close()
        }
    }

    @Test func withoutRetentionOptionsNothingIsRemoved() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, options: LogOptions(segmentBytes: segmentOf3), logger: quietLogger)
            for n in 1...9 { try log.append([testRecord(n)], timestamp: 1) }
            #expect(try log.enforceRetention(now: .max) == 0)
            #expect(log.firstSeq == 1)
            #expect(log.segmentCount == 3)
            log.close()
        }
    }
}
