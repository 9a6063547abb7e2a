import Testing

/// The campaign's gaps between OKs: kept only above the threshold, each with what the
/// loop did since the OK before it. The instants are made up: nothing here waits.
@Suite struct PublishGapsTests {
    let start = ContinuousClock.now

    @Test func aGapAtOrBelowTheThresholdIsNotKeptButCountsForTheLongest() {
        var gaps = PublishGaps(threshold: .seconds(3), publishStart: start)
        #expect(gaps.ok(at: start + .seconds(1)) == nil)
        #expect(gaps.ok(at: start + .seconds(4)) == nil)
        #expect(gaps.gaps.isEmpty)
        #expect(gaps.longest == .seconds(3))
    }

    @Test func aLongGapCarriesWhatHappenedSinceTheOKBefore() throws {
        var gaps = PublishGaps(threshold: .seconds(3), publishStart: start)
        gaps.busyAnswer()  // before the first OK: not the gap's
        _ = gaps.ok(at: start + .seconds(10))
        gaps.faultInjected("stream leader", at: start + .seconds(10))
        gaps.busyAnswer()
        gaps.busyAnswer()
        gaps.resentAfterDisconnect(7)
        gaps.gatewayExited()
        gaps.gatewayStarted()
        gaps.blocked("leader poll", from: start + .seconds(11), to: start + .seconds(13))
        gaps.blocked("leader poll", from: start + .seconds(13), to: start + .seconds(15))
        let found = gaps.ok(at: start + .seconds(16))
        let gap = try #require(found)
        #expect(gap.length == .seconds(6))
        #expect(gap.busy == 2)
        #expect(gap.resentAfterDisconnect == 7)
        #expect(gap.resentAfterSilence == 0)
        #expect(gap.gatewayStarts == 1 && gap.gatewayExits == 1)
        #expect(gap.blocked == ["leader poll": .seconds(4)])
        #expect(gap.fault?.kind == "stream leader")
        let metadata = Dictionary(uniqueKeysWithValues: gaps.metadata(gap))
        #expect(metadata["test.gap_start_ms"] == "10000")
        #expect(metadata["test.fault_before_gap_ms"] == "0")
        #expect(metadata["test.blocked_ms"] == "[leader poll: 4000]")
        // The next gap starts from nothing.
        let later = gaps.ok(at: start + .seconds(20))
        let next = try #require(later)
        #expect(next.busy == 0 && next.blocked.isEmpty)
        #expect(gaps.gaps.count == 3)  // the first OK, 10 s after the start, ended one too
    }

    @Test func aFaultDuringTheGapIsNamedWithANegativeLead() throws {
        var gaps = PublishGaps(threshold: .seconds(3), publishStart: start)
        gaps.faultInjected("reducer", at: start + .seconds(2))
        let found = gaps.ok(at: start + .seconds(5))
        let gap = try #require(found)
        #expect(Dictionary(uniqueKeysWithValues: gaps.metadata(gap))["test.fault_before_gap_ms"] == "-2000")
    }

    @Test func aHoldWithNothingUnansweredIsNoGap() {
        var gaps = PublishGaps(threshold: .seconds(3), publishStart: start)
        _ = gaps.ok(at: start + .seconds(1))
        gaps.held(from: start + .seconds(1), to: start + .seconds(9))
        #expect(gaps.ok(at: start + .seconds(10)) == nil)
        #expect(gaps.longest == .seconds(1))
        #expect(gaps.heldTime == .seconds(8) && gaps.holds == 1)
    }
}
