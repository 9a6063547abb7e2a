/// The membership of one user's stream as a value: what the reader of `in` has applied, and
/// the pump's waits for it to reach a SEQ (``MembershipFeed`` holds it behind a lock; a test
/// drives it without I/O, with any `Waiter`).
package struct MembershipFeedState<Waiter> {
    /// The user's channels, as far as `in` has been read.
    package private(set) var channels: UserChannels
    /// The SEQ of the last event of `in` applied; 0 before the first.
    package private(set) var through: UInt64 = 0
    /// The reader has ended: no SEQ will be reached any more.
    package private(set) var ended = false
    private var waiters: [Int: (seq: UInt64, waiter: Waiter)] = [:]
    private var nextID = 0

    package init(user: String) {
        channels = UserChannels(user: user)
    }

    /// What a wait does now.
    package enum Wait: Equatable {
        /// The SEQ is applied already (`true`) or never will be (`false`).
        case answered(Bool)
        /// The waiter waits, under this id, until ``apply(type:event:seq:)`` or ``end()``.
        case waiting(id: Int)
    }

    /// Applies the event of SEQ `seq` of `in` and returns the waiters it satisfies.
    package mutating func apply(type: String, event: [UInt8], seq: UInt64) -> [Waiter] {
        channels.apply(type: type, event: event, seq: seq)
        through = max(through, seq)
        // Read for every event of `in`; a wait is rare (one output at a time, of one pump).
        guard waiters.values.contains(where: { $0.seq <= through }) else { return [] }
        let done = waiters.filter { $0.value.seq <= through }
        for id in done.keys { waiters[id] = nil }
        return done.sorted { $0.key < $1.key }.map(\.value.waiter)
    }

    /// Marks the reader ended and returns every waiter (each to be answered `false`).
    package mutating func end() -> [Waiter] {
        ended = true
        defer { waiters.removeAll() }
        return waiters.sorted { $0.key < $1.key }.map(\.value.waiter)
    }

    /// `waiter` waits until SEQ `seq` of `in` is applied.
    package mutating func wait(through seq: UInt64, _ waiter: Waiter) -> Wait {
        if through >= seq { return .answered(true) }
        if ended { return .answered(false) }
        let id = nextID
        nextID += 1
        waiters[id] = (seq, waiter)
        return .waiting(id: id)
    }

    /// Takes back the wait `id` (its task was cancelled); `nil` if it was answered already.
    package mutating func cancel(_ id: Int) -> Waiter? {
        waiters.removeValue(forKey: id)?.waiter
    }

    /// Whether the user is a member of `cid` at SEQ `cause`, or, for `nil`, as far as read.
    package func contains(_ cid: String, at cause: UInt64?) -> Bool {
        guard let cause else { return channels.contains(cid) }
        return channels.contains(cid, at: cause)
    }
}
