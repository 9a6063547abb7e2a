import Foundation
import Testing

@testable import EventBusBroker

@Suite("SegmentLog: a failed sync is final")
struct LogSyncFailureTests {
    @Test func afterAFailedSyncTheLogTakesNoMoreWritesAndReopeningRecoversIt() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            try log.append((1...3).map { testRecord($0) }, timestamp: 1)
            try log.sync()
            try log.append((4...5).map { testRecord($0) }, timestamp: 1)
            log.failNextSync.store(EIO, ordering: .relaxed)
            #expect(throws: LogError.self) { try log.sync() }
            #expect(log.durableSeq == 3)
            // A retry must not report durable what the kernel may have dropped.
            do {
                try log.sync()
                Issue.record("a sync after a failed one succeeded")
            } catch let error as LogError {
                #expect(error.errno == EIO)
            }
            #expect(log.durableSeq == 3)
            #expect(throws: LogError.self) { try log.append([testRecord(6)], timestamp: 1) }
            #expect(throws: LogError.self) { try log.flush() }
            log.close()

            // The records were written before the sync failed: reopening re-reads and re-syncs them.
            let reopened = try SegmentLog(directory: dir, logger: quietLogger)
            #expect(reopened.headSeq == 5)
            #expect(reopened.durableSeq == 5)
            #expect(matches(try reopened.read(seq: 5), testRecord(5), seq: 5))
            reopened.close()
        }
    }
}
