import Foundation
import Synchronization

/// A value asked of the cluster every `interval` on a thread of its own (a stream's
/// leader, a consumer's ack floor), so that the campaign's publisher never waits on
/// JetStream's API itself: a request waits its whole timeout while a leader is elected,
/// and the publisher then neither sends nor reads.
final class ClusterPoll<Value: Sendable & Equatable>: Sendable {
    typealias Instant = ContinuousClock.Instant

    /// An answer: the value and when it came.
    struct Reading: Sendable, Equatable {
        var at: Instant
        var value: Value
    }

    private struct State {
        /// Each value when first answered, after another one.
        var changes: [Reading] = []
        var latest: Reading?
        var stopping = false
        var stopped = false
    }

    private let state = Mutex(State())

    /// Starts asking: `ask` returns `nil` when the cluster gave no answer.
    init(interval: Duration = .milliseconds(100), _ ask: @escaping @Sendable () -> Value?) {
        let pause = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        Thread { [self] in
            while !state.withLock({ $0.stopping }) {
                if let value = ask() {
                    let reading = Reading(at: .now, value: value)
                    state.withLock { state in
                        if state.changes.last?.value != value { state.changes.append(reading) }
                        state.latest = reading
                    }
                }
                Thread.sleep(forTimeInterval: pause)  // a poll interval
            }
            state.withLock { $0.stopped = true }
        }.start()
    }

    /// Asks the thread to end, and waits for it (at most 10 s: one request's timeout).
    func stop() {
        state.withLock { $0.stopping = true }
        for _ in 0..<200 where !state.withLock({ $0.stopped }) {
            Thread.sleep(forTimeInterval: 0.05)  // a poll interval
        }
    }

    /// The last answer.
    var latest: Reading? { state.withLock { $0.latest } }

    /// The values from the one answered last before `start` to the last answered before
    /// `end`, each once in a row.
    func values(from start: Instant, to end: Instant) -> [Value] {
        state.withLock { state in
            let before = state.changes.last { $0.at <= start }
            return (before.map { [$0] } ?? []) + state.changes.filter { $0.at > start && $0.at <= end }
        }.map(\.value)
    }

    /// The first answer after `instant` with a value other than `old`.
    func firstChange(after instant: Instant, from old: Value?) -> Reading? {
        state.withLock { state in
            state.changes.first { $0.at > instant && $0.value != old }
        }
    }
}
