import EventBusChaos
import Testing

/// The observer's decisions, with the time given by hand.
struct ObserverStateTests {
    static func attached() -> ObserverState {
        var state = ObserverState(now: 0)
        state.attached(now: 0)
        _ = state.consumeAnswered(now: 0)
        return state
    }

    @Test func firstAttachStartsEarliestThenResumes() {
        var state = ObserverState(now: 0)
        #expect(state.startsEarliest)
        state.attached(now: 0)
        #expect(!state.startsEarliest)
    }

    @Test func acksEveryFiftyEventsEvenWhileTheyKeepComing() {
        var state = Self.attached()
        for seq in 1...49 { #expect(state.delivered(UInt64(seq), now: 0.001 * Double(seq)) == []) }
        #expect(state.delivered(50, now: 0.05) == [.ack(50)])
    }

    @Test func acksAfterAQuietTenthOfASecond() {
        var state = Self.attached()
        #expect(state.delivered(7, now: 1) == [])
        #expect(state.tick(now: 1.05) == [])
        #expect(state.tick(now: 1.2) == [.ack(7)])
    }

    @Test func noNewAckWhileAPingIsUnansweredAndTheAnswerReleasesIt() {
        var state = Self.attached()
        state.acked(3, now: 1)
        for seq in 4...60 { _ = state.delivered(UInt64(seq), now: 1.1) }
        #expect(state.tick(now: 1.5) == [])
        #expect(state.pingAnswered(2, now: 1.6).taken == false)
        let answer = state.pingAnswered(3, now: 1.7)
        #expect(answer.taken && answer.actions == [.ack(60)])
    }

    @Test func attachesAgainWhenAPingOrTheConsumeGoesUnanswered() {
        var state = Self.attached()
        state.acked(3, now: 1)
        #expect(state.tick(now: 3.9) == [])
        #expect(state.tick(now: 4.1) == [.attach])
        var fresh = ObserverState(now: 0)
        fresh.attached(now: 10)
        #expect(fresh.tick(now: 12) == [])
        #expect(fresh.tick(now: 13.5) == [.attach])
    }

    @Test func attachesAgainWhenRefused() {
        var state = Self.attached()
        #expect(state.refused(now: 1) == [.attach])
    }

    @Test func whenIdleItAcksItsLastEventAgainOrAttachesIfItHasNone() {
        var empty = Self.attached()
        #expect(empty.tick(now: 0.9) == [])
        #expect(empty.tick(now: 1.1) == [.attach])
        var state = Self.attached()
        _ = state.delivered(9, now: 1)
        state.acked(9, now: 1.2)
        _ = state.pingAnswered(9, now: 1.3)
        #expect(state.tick(now: 2.2) == [])
        #expect(state.tick(now: 2.4) == [.ack(9)])
    }

    @Test func stoppingAcksTheLastEventAndFinishesOnceTaken() {
        var state = Self.attached()
        _ = state.delivered(9, now: 1)
        #expect(state.stop(now: 1.01) == [.ack(9)])
        state.acked(9, now: 1.01)
        #expect(state.refused(now: 1.02) == [], "no attaching while stopping")
        #expect(state.tick(now: 2) == [])
        #expect(state.pingAnswered(9, now: 2.1).actions == [.finish])
        var silent = Self.attached()
        _ = silent.delivered(9, now: 1)
        _ = silent.stop(now: 1)
        silent.acked(9, now: 1)
        #expect(silent.tick(now: 4.5) == [.finish])
        var empty = Self.attached()
        #expect(empty.stop(now: 1) == [.finish])
    }
}
