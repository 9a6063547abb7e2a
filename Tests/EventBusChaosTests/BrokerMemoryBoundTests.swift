import EventBusChaos
import Testing

struct BrokerMemoryBoundTests {
    private let mebibyte = 1_048_576

    @Test func theBoundIsWhatWasHeldWhenReadyPlusCacheIndexDedupAndOnePeersQueue() {
        let bound = BrokerMemoryBound(readyBytes: 60 * mebibyte, loggedBytes: 10 * mebibyte, records: 50_000)
        let cache = 10 * mebibyte + 50_000 * 64
        #expect(bound.bytes == 60 * mebibyte + cache + 50_000 * (16 + 70) + 100_000 * 320)
    }

    @Test func theCacheCountsNoMoreThanItsSize() {
        var bound = BrokerMemoryBound(readyBytes: 0, loggedBytes: 900 * mebibyte, records: 0)
        bound.peerHighWaterMark = 0
        #expect(bound.bytes == 256 * mebibyte)
        bound.cacheBytes = 64 * mebibyte
        #expect(bound.bytes == 64 * mebibyte)
    }

    @Test func aPeakOverTheBoundIsAViolationThatGivesTheFigures() throws {
        let bound = BrokerMemoryBound(readyBytes: 60 * mebibyte, loggedBytes: 10 * mebibyte, records: 50_000)
        #expect(bound.check(peakBytes: bound.bytes) == nil)
        let violation = try #require(bound.check(peakBytes: bound.bytes + 1))
        #expect(violation == .memoryOverBound(peakBytes: bound.bytes + 1, bound: bound))
        #expect("\(violation)".hasPrefix("memory: eventbus up peaked at \((bound.bytes + 1) / mebibyte) MiB, over its bound of \(bound.bytes / mebibyte) MiB"))
        #expect("\(violation)".contains("60 MiB when ready, 50000 records of 10 MiB logged"))
    }
}
