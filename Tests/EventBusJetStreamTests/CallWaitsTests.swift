@testable import EventBusJetStream
import Testing

/// The waits of a set-up's tries within one budget, without I/O.
@Suite struct CallWaitsTests {
    /// Each try that times out having used its whole wait: 0.25, 0.5, 1, 2, 2 s, then what
    /// is left of 7 s, then none.
    @Test func waitsDoubleUpToTheLongestAndEndWithTheBudget() {
        var waits = CallWaits(budget: .seconds(7))
        var elapsed = Duration.zero
        var seen: [Duration] = []
        while let wait = waits.nextWait(elapsed: elapsed) {
            seen.append(wait)
            elapsed += wait
        }
        #expect(seen == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(2), .milliseconds(1_250)])
        #expect(elapsed == .seconds(7))
    }

    /// A try that failed at once (no responder) leaves the budget to the next ones.
    @Test func quickFailuresLeaveTheBudget() {
        var waits = CallWaits(budget: .seconds(1))
        #expect(waits.nextWait(elapsed: .zero) == .milliseconds(250))
        #expect(waits.nextWait(elapsed: .milliseconds(10)) == .milliseconds(500))
        #expect(waits.nextWait(elapsed: .milliseconds(700)) == .milliseconds(300))
        #expect(waits.nextWait(elapsed: .seconds(1)) == nil)
    }

    @Test func noBudgetNoTry() {
        var waits = CallWaits(budget: .zero)
        #expect(waits.nextWait(elapsed: .zero) == nil)
    }
}
