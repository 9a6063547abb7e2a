import Dispatch
import Foundation
import Synchronization
import ZeroMQ

/// Runs the log's fsyncs on a thread of their own, so that the broker's loop
/// goes on receiving, appending and delivering while the disk flushes.
///
/// The loop ``submit(_:)``s a ``SyncTicket``; the worker performs the tickets
/// one at a time, in order, and signals ``wakeup`` after each; the loop, when
/// its poller finds ``wakeup`` readable, ``takeOutcomes()`` and completes them
/// on the log. With a slow disk, everything appended during one fsync is
/// covered by the next: the group grows with the disk's latency, and the loop
/// loses no time to it.
final class SyncWorker: Sendable {
    /// A performed ticket: `failure` is nil when it reached the disk.
    struct Outcome: Sendable {
        let ticket: SyncTicket
        let failure: LogError?
        let nanoseconds: UInt64
    }

    private struct State {
        var queue: [SyncTicket] = []
        var outcomes: [Outcome] = []
        var stopping = false
    }

    /// Readable when an outcome waits; for the loop's poller.
    let wakeup: EventFD
    private let state = Mutex(State())
    private let work = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)

    init() throws(ZMQError) {
        wakeup = try EventFD()
        let thread = Thread { [self] in run() }
        thread.name = "eventbus-fsync"
        thread.start()
    }

    /// Queues a ticket; the worker performs it after those queued before.
    func submit(_ ticket: SyncTicket) {
        state.withLock { $0.queue.append(ticket) }
        work.signal()
    }

    /// The outcomes performed since the last call, in submission order.
    func takeOutcomes() -> [Outcome] {
        wakeup.drain()
        return state.withLock { state in
            defer { state.outcomes.removeAll() }
            return state.outcomes
        }
    }

    /// Performs what is queued, then ends the thread; returns when it has ended.
    func stop() {
        state.withLock { $0.stopping = true }
        work.signal()
        exited.wait()
    }

    private func run() {
        while true {
            work.wait()
            let next: SyncTicket? = state.withLock { state in
                state.queue.isEmpty ? nil : state.queue.removeFirst()
            }
            guard let ticket = next else {
                if state.withLock({ $0.stopping && $0.queue.isEmpty }) { break }
                continue
            }
            let started = DispatchTime.now().uptimeNanoseconds
            var failure: LogError?
            do { try ticket.perform() } catch { failure = error }
            let outcome = Outcome(ticket: ticket, failure: failure,
                                  nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            state.withLock { $0.outcomes.append(outcome) }
            wakeup.signal()
        }
        exited.signal()
    }
}
