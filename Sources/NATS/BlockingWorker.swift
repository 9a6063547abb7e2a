import Dispatch
import Foundation
import Synchronization

/// One thread of its own that runs blocking libnats calls one after another, so that a
/// Swift task can await them without holding a thread of the cooperative pool.
///
/// A pull fetch waits up to its timeout inside libnats; on the cooperative pool, a few
/// such waits would stall every task of the process. Jobs run in the order submitted,
/// which also keeps libnats's one-fetch-at-a-time rule for a subscription.
final class BlockingWorker: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var stopped = false
    }

    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)

    init(name: String) {
        // The thread holds the worker until ``stop()`` lets it end.
        let thread = Thread { [self] in loop() }
        thread.name = name
        thread.start()
    }

    private func loop() {
        while true {
            wakeup.wait()
            let (job, stop) = state.withLock { state -> ((@Sendable () -> Void)?, Bool) in
                state.jobs.isEmpty ? (nil, state.stopped) : (state.jobs.removeFirst(), false)
            }
            if let job { job() } else if stop { return }
        }
    }

    /// Runs `job` on the worker's thread and returns its result.
    func run<T: Sendable>(_ job: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let accepted = state.withLock { state in
                if state.stopped { return false }
                state.jobs.append { continuation.resume(returning: job()) }
                return true
            }
            if accepted {
                wakeup.signal()
            } else {
                // Stopped: run it here rather than never; only a late caller gets here.
                continuation.resume(returning: job())
            }
        }
    }

    /// Lets the thread finish the jobs it has and end.
    func stop() {
        state.withLock { $0.stopped = true }
        wakeup.signal()
    }
}
