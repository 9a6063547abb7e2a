/// When a stream's reader ACKs: ACKs are cumulative, and one per quarter of the credit keeps
/// the bus sending (fewer than the credit are ever outstanding) without one message back per
/// event, which matters for a user's stream, whose reader of `in` reads all of it.
struct AckCadence {
    private let every: Int
    private var unacked = 0

    init(credit: Int) {
        every = max(1, credit / 4)
    }

    /// One more delivery read: whether to ACK it (and everything before it) now.
    mutating func take() -> Bool {
        unacked += 1
        guard unacked >= every else { return false }
        unacked = 0
        return true
    }
}
