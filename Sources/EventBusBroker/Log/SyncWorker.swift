import Dispatch
import Foundation
import Synchronization
import ZeroMQ

/// Runs the log's fsyncs on threads of their own, so that the broker's loop
/// goes on receiving, appending and delivering while the disk flushes.
///
/// The loop ``submit(_:)``s a ``SyncTicket`` and gets its serial number; up to
/// ``depth`` tickets are performed at once, one per thread, and ``wakeup`` is
/// signalled after each; the loop, when its poller finds ``wakeup`` readable,
/// ``takeOutcomes()`` — in the order they finished, which may not be the order
/// submitted — and completes them on the log in submission order.
///
/// Four in flight: a group that gathers while fsyncs run starts its own a
/// quarter of an fsync after the last one started (``SyncPacer``) instead of
/// waiting for them to end, so a confirm waits for about one fsync, not two,
/// when the disk is slow. Everything appended meanwhile is covered by the
/// next: the groups grow with the disk's latency, and the loop loses no time
/// to it. (Measured with every fdatasync 2 ms slower, confirms at 10,000/s:
/// p99 about 6 ms with one in flight, 5.1–5.6 ms with two, 4.4–4.5 ms with
/// four; on a fast disk no difference.)
final class SyncWorker: Sendable {
    /// A performed ticket: `failure` is nil when it reached the disk.
    struct Outcome: Sendable {
        /// The number ``submit(_:)`` returned for the ticket.
        let serial: UInt64
        let ticket: SyncTicket
        let failure: LogError?
        let nanoseconds: UInt64
    }

    private struct State {
        var queue: [(serial: UInt64, ticket: SyncTicket)] = []
        var outcomes: [Outcome] = []
        var lastSerial: UInt64 = 0
        var stopping = false
    }

    /// How many tickets may be performed at once: the number of threads.
    let depth: Int
    /// Readable when an outcome waits; for the loop's poller.
    let wakeup: EventFD
    private let state = Mutex(State())
    private let work = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)

    init(depth: Int = 4) throws(ZMQError) {
        precondition(depth >= 1, "a sync worker needs a thread")
        self.depth = depth
        wakeup = try EventFD()
        for index in 0..<depth {
            let thread = Thread { [self] in run() }
            thread.name = "eventbus-fsync-\(index)"
            thread.start()
        }
    }

    /// Queues a ticket; a free thread performs it. Returns its serial number, which
    /// rises by one with each ticket.
    @discardableResult
    func submit(_ ticket: SyncTicket) -> UInt64 {
        let serial = state.withLock { state in
            state.lastSerial += 1
            state.queue.append((state.lastSerial, ticket))
            return state.lastSerial
        }
        work.signal()
        return serial
    }

    /// The outcomes performed since the last call, in the order they finished.
    func takeOutcomes() -> [Outcome] {
        wakeup.drain()
        return state.withLock { state in
            defer { state.outcomes.removeAll() }
            return state.outcomes
        }
    }

    /// Performs what is queued, then ends the threads; returns when they have ended.
    func stop() {
        state.withLock { $0.stopping = true }
        for _ in 0..<depth { work.signal() }
        for _ in 0..<depth { exited.wait() }
    }

    private func run() {
        while true {
            work.wait()
            let next = state.withLock { state in
                state.queue.isEmpty ? nil : state.queue.removeFirst()
            }
            guard let (serial, ticket) = next else {
                if state.withLock({ $0.stopping && $0.queue.isEmpty }) { break }
                continue
            }
            let started = DispatchTime.now().uptimeNanoseconds
            var failure: LogError?
            do { try ticket.perform() } catch { failure = error }
            let outcome = Outcome(serial: serial, ticket: ticket, failure: failure,
                                  nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
            state.withLock { $0.outcomes.append(outcome) }
            wakeup.signal()
        }
        exited.signal()
    }
}
