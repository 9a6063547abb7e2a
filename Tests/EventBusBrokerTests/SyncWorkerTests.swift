import Foundation
import Testing
import ZeroMQ

@testable import EventBusBroker

/// The log's fsync off the loop's thread: a ticket covers what was appended
/// before it was taken, appends go on meanwhile, several tickets are performed
/// at once, and each outcome names its ticket's serial number.
@Suite("SyncWorker and SyncTicket")
struct SyncWorkerTests {
    /// Waits until the worker has an outcome (its eventfd is readable), then takes them.
    static func outcomes(of worker: SyncWorker) throws -> [SyncWorker.Outcome] {
        var poller = Poller()
        poller.add(fileDescriptor: worker.wakeup.fileDescriptor)
        var taken: [SyncWorker.Outcome] = []
        while taken.isEmpty {
            guard try poller.poll(timeoutMilliseconds: 10_000)[0].contains(.readable) else {
                Issue.record("the worker signalled no outcome within 10 s")
                return []
            }
            taken = worker.takeOutcomes()
        }
        return taken
    }

    @Test func aTicketCoversWhatWasAppendedBeforeItAndTheLogTakesAppendsMeanwhile() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            let worker = try SyncWorker()
            try log.append((1...3).map { testRecord($0) }, timestamp: 1)
            let first = try log.prepareSync()
            #expect(first.head == 3)
            #expect(worker.submit(first) == 1)
            // Appended while the first ticket is out: the next one covers it.
            try log.append((4...5).map { testRecord($0) }, timestamp: 1)
            #expect(log.durableSeq == 0)
            let second = try log.prepareSync()
            #expect(second.head == 5)
            #expect(worker.submit(second) == 2)

            var outcomes: [SyncWorker.Outcome] = []
            while outcomes.count < 2 { outcomes += try Self.outcomes(of: worker) }
            // They may end in either order; the serial numbers say which is which.
            outcomes.sort { $0.serial < $1.serial }
            #expect(outcomes.map(\.serial) == [1, 2])
            #expect(outcomes.map(\.ticket.head) == [3, 5])
            #expect(outcomes.allSatisfy { $0.failure == nil })
            log.completeSync(outcomes[0].ticket, failure: nil)
            #expect(log.durableSeq == 3)
            log.completeSync(outcomes[1].ticket, failure: nil)
            #expect(log.durableSeq == 5)
            worker.stop()
            log.close()
        }
    }

    @Test func aFailedTicketIsFinalForTheLog() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            let worker = try SyncWorker()
            try log.append([testRecord(1)], timestamp: 1)
            log.failNextSync.store(EIO, ordering: .relaxed)
            worker.submit(try log.prepareSync())
            let outcome = try #require(try Self.outcomes(of: worker).first)
            #expect(outcome.failure?.errno == EIO)
            log.completeSync(outcome.ticket, failure: outcome.failure)
            #expect(log.durableSeq == 0)
            // fsyncgate: no later sync may report durable what the kernel may have dropped.
            #expect(throws: LogError.self) { try log.prepareSync() }
            #expect(throws: LogError.self) { try log.append([testRecord(2)], timestamp: 1) }
            worker.stop()
            log.close()
        }
    }

    @Test func aTicketOutlivesARollOfTheSegmentItNames() throws {
        try withTemporaryDirectory { dir in
            var options = LogOptions()
            options.segmentBytes = 4 * testRecordSize(1)
            let log = try SegmentLog(directory: dir, options: options, logger: quietLogger)
            let worker = try SyncWorker()
            try log.append((1...3).map { testRecord($0) }, timestamp: 1)
            let ticket = try log.prepareSync()
            // Rolls twice: the log closes the descriptor of the segment the ticket names.
            for n in 4...12 { try log.append([testRecord(n)], timestamp: 1) }
            #expect(try segmentFiles(dir).count >= 3)
            worker.submit(ticket)
            let outcome = try #require(try Self.outcomes(of: worker).first)
            #expect(outcome.failure == nil)
            log.completeSync(outcome.ticket, failure: nil)
            #expect(log.durableSeq == 3)
            try log.sync()
            #expect(log.durableSeq == 12)
            worker.stop()
            log.close()
        }
    }

    @Test func twoTicketsArePerformedAtOnce() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            let worker = try SyncWorker(depth: 2)
            // The first is held inside its perform(); the second still completes.
            let hold = DispatchSemaphore(value: 0)
            try log.append([testRecord(1)], timestamp: 1)
            log.holdNextSync.withLock { $0 = hold }
            let first = worker.submit(try log.prepareSync())
            try log.append([testRecord(2)], timestamp: 1)
            let second = worker.submit(try log.prepareSync())
            #expect(try Self.outcomes(of: worker).map(\.serial) == [second])
            hold.signal()
            #expect(try Self.outcomes(of: worker).map(\.serial) == [first])
            worker.stop()
            log.close()
        }
    }

    @Test func stopPerformsWhatIsQueuedFirst() throws {
        try withTemporaryDirectory { dir in
            let log = try SegmentLog(directory: dir, logger: quietLogger)
            let worker = try SyncWorker()
            try log.append([testRecord(1)], timestamp: 1)
            worker.submit(try log.prepareSync())
            worker.stop()
            #expect(worker.takeOutcomes().map(\.ticket.head) == [1])
            log.close()
        }
    }
}
