import Testing

/// The campaign's reducer kill: only a live instance that has run the supervisor's
/// `stableAfter`, with a fresh ack floor; otherwise the loop looks again on a later turn
/// (the publisher going on meanwhile). The instants are made up: nothing here waits.
@Suite struct ReducerKillTests {
    let due = ContinuousClock.now
    var kill: ReducerKill { ReducerKill(due: due) }

    @Test func withNoInstanceItWaits() {
        #expect(kill.step(now: due + .seconds(5), process: nil, ackFloor: (due + .seconds(5), 40)) == .wait)
    }

    /// Killing a younger one counts toward a crash loop: five such exits in a row, and the
    /// supervisor starts the reducer only every 30 s.
    @Test func anInstanceYoungerThanStableAfterIsLeftToRun() {
        let now = due + .seconds(3)
        #expect(kill.step(now: now, process: (7, .seconds(9)), ackFloor: (now, 40)) == .wait)
        #expect(kill.step(now: now, process: (7, .seconds(10)), ackFloor: (now, 40)) == .kill(pid: 7, ackFloor: 40))
    }

    @Test func anOldAckFloorIsNotTheFloorAtTheKill() {
        let now = due + .seconds(3)
        #expect(kill.step(now: now, process: (7, .seconds(30)), ackFloor: nil) == .wait)
        #expect(kill.step(now: now, process: (7, .seconds(30)), ackFloor: (now - .seconds(2), 40)) == .wait)
        #expect(kill.step(now: now, process: (7, .seconds(30)), ackFloor: (now - .milliseconds(300), 40)) == .kill(pid: 7, ackFloor: 40))
    }

    @Test func pastItsPatienceItGivesUpSayingWhy() {
        let now = due + .seconds(121)
        #expect(kill.step(now: now, process: nil, ackFloor: (now, 40))
            == .giveUp("no receipt-reducer process under eventbus up for 120.0 seconds"))
        guard case .giveUp(let young) = kill.step(now: now, process: (7, .seconds(2)), ackFloor: (now, 40)) else {
            Issue.record("a reducer restarted every 2 s was waited for past the patience")
            return
        }
        #expect(young.contains("ran 10.0 seconds"))
        guard case .giveUp = kill.step(now: now, process: (7, .seconds(30)), ackFloor: nil) else {
            Issue.record("an ack floor never answered was waited for past the patience")
            return
        }
    }
}
