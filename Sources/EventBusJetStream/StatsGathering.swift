/// Who waits for a gateway's STATS, so that one thread at a time asks JetStream for the
/// cluster's figures however many STATS arrive: a STATS that comes while a gathering
/// runs waits for the next one (its figures are then no older than its request), and
/// past ``maxWaiting`` waiting it is refused `busy`. A value, tested without I/O.
struct StatsGathering: Sendable, Equatable {
    /// A STATS to answer: its ROUTER peer and correlation frame.
    struct Requester: Sendable, Equatable {
        let peer: [UInt8]
        let correlation: [UInt8]
    }

    /// What to do with a STATS that just came.
    enum Decision: Sendable, Equatable {
        /// Start a gathering; this STATS gets its answer.
        case start
        /// A gathering runs; this STATS gets the next one's answer.
        case wait
        /// ``maxWaiting`` STATS already wait: answer `busy`.
        case refuse
    }

    /// How many STATS may wait behind a running gathering.
    static let maxWaiting = 1_000

    /// The STATS the running gathering answers; `nil` when none runs.
    private(set) var running: [Requester]?
    /// The STATS that came while it ran, for the next one.
    private(set) var waiting: [Requester] = []

    mutating func asked(_ requester: Requester) -> Decision {
        guard running != nil else {
            running = [requester]
            return .start
        }
        guard waiting.count < Self.maxWaiting else { return .refuse }
        waiting.append(requester)
        return .wait
    }

    /// The running gathering is done: who gets its answer, and whether another starts
    /// for the STATS that waited.
    mutating func finished() -> (answer: [Requester], startAnother: Bool) {
        let answer = running ?? []
        if waiting.isEmpty {
            running = nil
            return (answer, false)
        }
        running = waiting
        waiting = []
        return (answer, true)
    }
}
