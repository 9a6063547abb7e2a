/// When the failover campaign kills the reducer: a decision with no I/O, made again on
/// each turn of the publisher's loop from what the loop saw, so that waiting for it
/// never holds up the publisher.
///
/// The kill waits for a live instance that has run ``stableAfter``, the supervisor's
/// (`SupervisorConfig.stableAfter`, 10 s): an exit sooner counts toward a crash loop,
/// and after five in a row the supervisor starts the plugin only every 30 s. The
/// campaign's rounds take about 9 s, so killing whatever instance ran put the reducer in
/// a crash loop in the fourth round (four kills and an exit over a lease bucket's
/// timeout during an election) and kept it there, each later kill hitting an instance
/// just started; and the loop, blocked while it looked for the next one, sent and read
/// nothing for up to 30 s (a 29.4 s gap between OKs in 20 rounds, 16-24 s ones since).
struct ReducerKill {
    typealias Instant = ContinuousClock.Instant

    enum Step: Equatable {
        /// Not yet: look again on a later turn.
        case wait
        /// SIGKILL `pid` now; `ackFloor` is its consumer's on `in` (it has recovered once
        /// the floor passes it).
        case kill(pid: Int32, ackFloor: UInt64)
        /// Nothing to kill came within the patience.
        case giveUp(String)
    }

    /// When its share of the publish was confirmed.
    let due: Instant
    var stableAfter: Duration = .seconds(10)
    /// The oldest ack floor reading the kill goes by.
    var freshFloor: Duration = .seconds(1)
    var patience: Duration = .seconds(120)

    /// What to do at `now`, given the reducer's live process (its id and how long it has
    /// run) and the last answer about its consumer's ack floor.
    func step(now: Instant, process: (pid: Int32, age: Duration)?, ackFloor: (at: Instant, floor: UInt64)?) -> Step {
        let floor = ackFloor.flatMap { $0.at.duration(to: now) <= freshFloor ? $0.floor : nil }
        if let process, process.age >= stableAfter, let floor { return .kill(pid: process.pid, ackFloor: floor) }
        guard due.duration(to: now) > patience else { return .wait }
        guard let process else { return .giveUp("no receipt-reducer process under eventbus up for \(patience)") }
        guard process.age >= stableAfter else {
            return .giveUp("no receipt-reducer instance ran \(stableAfter) in \(patience) (restarted every \(process.age) or less)")
        }
        return .giveUp("the reducer's consumer on in gave no ack floor in the last \(freshFloor) after \(patience)")
    }
}
