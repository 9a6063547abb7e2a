/// How long each try of a JetStream API call waits for its answer when the tries share one
/// budget (a consumer's set-up, within the gateway's request timeout). A value, tested
/// without I/O.
///
/// An API request made while a stream elects a new leader (4–9 s after its leader died)
/// goes unanswered: one try with the whole budget waits it out even when the election
/// ends early, and the CONSUME is answered `busy`. Short tries are made again soon after
/// the election; each timeout doubles the next wait, up to ``longest``, so that a cluster
/// that is slow but alive still gets to answer. No try runs past the budget's end.
struct CallWaits: Sendable, Equatable {
    /// The first try's wait.
    static let shortest = Duration.milliseconds(250)
    /// The longest wait of one try.
    static let longest = Duration.seconds(2)

    /// The whole budget, from the first try.
    let budget: Duration
    private var next = Self.shortest

    init(budget: Duration) { self.budget = budget }

    /// The wait of the next try, `elapsed` into the budget, and the one after it doubled;
    /// `nil` once the budget is spent.
    mutating func nextWait(elapsed: Duration) -> Duration? {
        let left = budget - elapsed
        guard left > .zero else { return nil }
        let wait = min(next, left)
        next = min(next * 2, Self.longest)
        return wait
    }
}
