import Foundation
import Testing

@testable import EventBusBroker

@Suite("SegmentLog: segment rolling")
struct LogSegmentTests {
    /// Options whose segments hold exactly `records` test records.
    func options(records: Int) -> LogOptions {
        LogOptions(segmentBytes: 16 + records * testRecordSize(1))
    }

    @Test func segmentRollsWhenTheNextBatchWouldPassSegmentBytes() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, options: options(records: 4), logger: quietLogger)
            for n in 1...10 { try log.append([testRecord(n)], timestamp: 1) }
            #expect(log.segmentCount == 3)
            #expect(try segmentFiles(dir) == [
                "00000000000000000001.seg", "00000000000000000005.seg", "00000000000000000009.seg",
            ])
            log.close()
        }
    }

    @Test func batchIsNeverSplitAcrossSegments() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, options: options(records: 4), logger: quietLogger)
            try log.append((1...3).map { testRecord($0) }, timestamp: 1)
            try log.append((4...6).map { testRecord($0) }, timestamp: 1)  // 3 + 3 > 4: rolls first
            try log.append((7...7).map { testRecord($0) }, timestamp: 1)  // fits beside 4...6
            try log.append((8...9).map { testRecord($0) }, timestamp: 1)  // rolls
            #expect(try segmentFiles(dir) == [
                "00000000000000000001.seg", "00000000000000000004.seg", "00000000000000000008.seg",
            ])
            log.close()
        }
    }

    @Test func batchLargerThanSegmentBytesGoesAloneIntoANewSegment() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, options: options(records: 4), logger: quietLogger)
            try log.append([testRecord(1)], timestamp: 1)
            try log.append((2...11).map { testRecord($0) }, timestamp: 1)
            try log.append([testRecord(12)], timestamp: 1)
            #expect(try segmentFiles(dir) == [
                "00000000000000000001.seg", "00000000000000000002.seg", "00000000000000000012.seg",
            ])
            for n in 1...12 { #expect(matches(try log.read(seq: UInt64(n)), testRecord(n), seq: UInt64(n))) }
            log.close()
        }
    }

    @Test func readAndScanWorkAcrossSegmentsBeforeAndAfterReopen() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, options: options(records: 7), logger: quietLogger)
            for n in stride(from: 1, through: 100, by: 5) {
                try log.append((n..<n + 5).map { testRecord($0) }, timestamp: UInt64(n))
            }
            #expect(log.segmentCount == 20)

            func check(_ log: SegmentLog) throws {
                for n in [100, 1, 37, 6, 5, 99] {
                    #expect(matches(try log.read(seq: UInt64(n)), testRecord(n), seq: UInt64(n)))
                }
                var seen: [UInt64] = []
                try log.scan(from: 3) { record in
                    #expect(matches(record, testRecord(Int(record.seq)), seq: record.seq))
                    seen.append(record.seq)
                    return true
                }
                #expect(seen == Array(3...100))
                seen = []
                try log.scan(from: 9) { seen.append($0.seq); return $0.seq < 12 }
                #expect(seen == [9, 10, 11, 12])
            }
            try check(log)
            log.close()
            let reopened = try SegmentLog(directory: dir, options: options(records: 7), logger: quietLogger)
            #expect(reopened.segmentCount == 20)
            #expect(reopened.headSeq == 100)
            try check(reopened)
            reopened.close()
        }
    }

    @Test func scanBodyMayReadAndScanOtherSegmentsOfTheSameLog() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, options: options(records: 5), logger: quietLogger)
            for n in 1...40 { try log.append([testRecord(n)], timestamp: 1) }
            try log.flush()
            var seen: [UInt64] = []
            try log.scan(from: 1) { record in
                seen.append(record.seq)
                #expect(matches(record, testRecord(Int(record.seq)), seq: record.seq))
                let other = 41 - record.seq
                #expect(matches(try log.read(seq: other), testRecord(Int(other)), seq: other))
                var inner: [UInt64] = []
                try log.scan(from: other) { inner.append($0.seq); return inner.count < 3 }
                #expect(inner == Array(other..<min(other + 3, 41)))
                return true
            }
            #expect(seen == Array(1...40))
            log.close()
        }
    }

    @Test func totalBytesCountsEverySegmentIncludingBufferedRecords() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, options: options(records: 2), logger: quietLogger)
            #expect(log.totalBytes == 16)
            for n in 1...3 { try log.append([testRecord(n)], timestamp: 1) }
            let expected = UInt64(2 * 16 + (1...3).map { testRecordSize($0) }.reduce(0, +))
            #expect(log.totalBytes == expected)
            log.close()
        }
    }
}
