import Dispatch
import Synchronization

/// The wait between two starts of a plugin: a given length, ended at once and for good
/// by ``interrupt()`` (every later wait returns at once too).
///
/// Its timer is a dispatch timer and ``interrupt()`` is synchronous: neither needs a
/// thread of the shared cooperative pool, which a busy host program may hold.
final class Backoff: Sendable {
    private struct State {
        var interrupted = false
        var waiter: (id: UInt64, continuation: CheckedContinuation<Void, Never>)?
        var lastID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Returns after `duration`, or at once when interrupted (before or during the wait).
    func wait(for duration: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let id: UInt64? = state.withLock { state in
                guard !state.interrupted else { return nil }
                state.lastID += 1
                state.waiter = (state.lastID, continuation)
                return state.lastID
            }
            guard let id else {
                continuation.resume()
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + DispatchTimeInterval(duration)) { [self] in
                resume { $0.id == id }
            }
        }
    }

    /// Ends the current wait and every later one; safe from any thread, more than once.
    func interrupt() {
        state.withLock { $0.interrupted = true }
        resume { _ in true }
    }

    /// Resumes the waiter, if there is one and `matches` it, outside the lock.
    private func resume(if matches: (_ waiter: (id: UInt64, continuation: CheckedContinuation<Void, Never>)) -> Bool) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter, matches(waiter) else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume()
    }
}

extension DispatchTimeInterval {
    /// `duration` in nanoseconds, negative durations as zero.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(Int(clamping: max(0, seconds).multipliedReportingOverflow(by: 1_000_000_000).partialValue
            + max(0, attoseconds) / 1_000_000_000))
    }
}
