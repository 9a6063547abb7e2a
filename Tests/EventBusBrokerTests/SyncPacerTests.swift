import Testing

@testable import EventBusBroker

/// The spacing of fsyncs in flight, with plain numbers: none before one was
/// measured, the average fsync ÷ depth after, never more than depth at once.
@Suite struct SyncPacerTests {
    @Test func withNothingMeasuredTheSecondStartsAtOnceAndTheThirdWaitsForAThread() {
        var pacer = SyncPacer(depth: 2)
        #expect(pacer.mayStart(now: 0, inFlight: 0))
        pacer.started(now: 0)
        #expect(pacer.mayStart(now: 1, inFlight: 1))
        #expect(pacer.delay(now: 1, inFlight: 1) == 0)
        pacer.started(now: 1)
        #expect(!pacer.mayStart(now: 1_000_000_000, inFlight: 2))
        #expect(pacer.delay(now: 5, inFlight: 2) == nil, "all threads busy: an fsync's end decides, not time")
    }

    @Test func oneInFlightTheNextStartsHalfAnFsyncLaterWithTwoThreads() {
        var pacer = SyncPacer(depth: 2)
        pacer.measured(nanoseconds: 2_000_000)  // 2 ms fsyncs
        #expect(pacer.spacingNanoseconds == 1_000_000)
        pacer.started(now: 10_000_000)
        #expect(!pacer.mayStart(now: 10_400_000, inFlight: 1))
        #expect(pacer.delay(now: 10_400_000, inFlight: 1) == 600_000)
        #expect(pacer.mayStart(now: 11_000_000, inFlight: 1))
        #expect(pacer.delay(now: 11_500_000, inFlight: 1) == 0)
        // Nothing in flight: no wait, whatever the last start.
        #expect(pacer.mayStart(now: 10_000_001, inFlight: 0))
        #expect(pacer.delay(now: 10_000_001, inFlight: 0) == nil)
    }

    @Test func theAverageFollowsTheDiskAnEighthPerSample() {
        var pacer = SyncPacer(depth: 2)
        pacer.measured(nanoseconds: 800_000)
        #expect(pacer.averageNanoseconds == 800_000, "the first sample is the average")
        pacer.measured(nanoseconds: 1_600_000)
        #expect(pacer.averageNanoseconds == 900_000)
        for _ in 0..<100 { pacer.measured(nanoseconds: 100_000) }
        #expect(pacer.averageNanoseconds < 110_000, "a faster disk shortens the spacing: \(pacer.averageNanoseconds)")
        #expect(pacer.averageNanoseconds >= 100_000)
    }

    @Test func oneThreadNeverOverlaps() {
        var pacer = SyncPacer(depth: 1)
        pacer.measured(nanoseconds: 1_000)
        pacer.started(now: 0)
        #expect(!pacer.mayStart(now: 1_000_000, inFlight: 1))
        #expect(pacer.delay(now: 0, inFlight: 1) == nil)
    }
}
