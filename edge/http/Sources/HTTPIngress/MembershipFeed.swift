import Synchronization

/// The membership of one user's stream, shared by its two readers: the reader of `in` applies
/// the membership events as they come; the pump of `out` waits, for an output caused at SEQ
/// `s` of `in`, until the reader has applied `s`, then asks whether the user was a member.
/// The two consumers run side by side, so neither the broker nor a cluster gateway needs a
/// consumer that spans stages.
final class MembershipFeed: Sendable {
    private let state: Mutex<MembershipFeedState<CheckedContinuation<Bool, Never>>>

    init(user: String) {
        state = Mutex(MembershipFeedState(user: user))
    }

    /// Applies the event of SEQ `seq` of `in` (of type `type`).
    func apply(type: String, event: [UInt8], seq: UInt64) {
        for waiter in state.withLock({ $0.apply(type: type, event: event, seq: seq) }) { waiter.resume(returning: true) }
    }

    /// The reader of `in` has ended: every wait, now and later, is answered `false`.
    func end() {
        for waiter in state.withLock({ $0.end() }) { waiter.resume(returning: false) }
    }

    /// Waits until SEQ `seq` of `in` is applied: `true` then; `false` if the reader ended first
    /// or the task was cancelled.
    func wait(through seq: UInt64) async -> Bool {
        let id = Mutex<Int?>(nil)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let wait = state.withLock { state -> MembershipFeedState<CheckedContinuation<Bool, Never>>.Wait in
                    // Cancelled before the wait began: answered at once.
                    if Task.isCancelled { return .answered(false) }
                    let wait = state.wait(through: seq, continuation)
                    if case .waiting(let waiting) = wait { id.withLock { $0 = waiting } }
                    return wait
                }
                if case .answered(let reached) = wait { continuation.resume(returning: reached) }
            }
        } onCancel: {
            // Under the state's lock: either the wait is registered (and its id set) already,
            // or the body, which checks for cancellation under the same lock, has not begun.
            state.withLock { state in id.withLock { $0 }.flatMap { state.cancel($0) } }?.resume(returning: false)
        }
    }

    /// Whether the user was a member of `cid` at SEQ `cause` of `in`, or, for `nil`, as far as
    /// `in` has been read.
    func contains(_ cid: String, at cause: UInt64?) -> Bool {
        state.withLock { $0.contains(cid, at: cause) }
    }
}
