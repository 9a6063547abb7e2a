import Foundation
import Synchronization

/// A thread of its own as a `TaskExecutor`: tasks that prefer it
/// (`withTaskExecutorPreference`) run there and nowhere else, so work that must happen
/// on time — restarting a plugin, stopping one at shutdown — does not wait for a free
/// thread of the shared cooperative pool, which a busy host program (or a test that
/// blocks in a socket read) may hold.
///
/// The thread runs one job at a time, in the order enqueued, until ``shutdown()``, after
/// which it ends once its queue is empty: shut it down when nothing can enqueue any more
/// (the operation given to `withTaskExecutorPreference` has returned).
public final class ThreadExecutor: TaskExecutor, Sendable {
    private struct Queue {
        var jobs: [UnownedJob] = []
        var next = 0
        var shuttingDown = false
    }

    private let queue = Mutex(Queue())
    private let wake = DispatchSemaphore(value: 0)

    /// Starts the thread, named `name` (for debuggers and `top -H`).
    public init(name: String) {
        let thread = Thread { [self] in serve() }
        thread.name = name
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withLock { $0.jobs.append(job) }
        wake.signal()
    }

    /// Lets the thread end once every job enqueued has run.
    public func shutdown() {
        queue.withLock { $0.shuttingDown = true }
        wake.signal()
    }

    private func serve() {
        while true {
            wake.wait()
            while let job = nextJob() {
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
            if queue.withLock({ $0.shuttingDown && $0.next == $0.jobs.count }) { return }
        }
    }

    private func nextJob() -> UnownedJob? {
        queue.withLock { queue in
            guard queue.next < queue.jobs.count else {
                queue.jobs.removeAll(keepingCapacity: true)
                queue.next = 0
                return nil
            }
            defer { queue.next += 1 }
            return queue.jobs[queue.next]
        }
    }
}
