import NATS
import Synchronization
import ZeroMQ

/// What libnats's threads and the consumers' fetch threads hand the gateway's loop: a
/// queue behind a lock, and an eventfd that wakes the loop's poll.
///
/// ``post(_:)`` is all a libnats callback does: append and signal, never block.
final class GatewayInbox: Sendable {
    enum Event: Sendable {
        /// A batch's commit ack or failure.
        case batchAnswered(flight: OrderedPublisher.JobID, attempt: UInt64, Result<PubAck, NATSError>)
        /// A consumer's JetStream side is ready: the OK's FIRST, and whether it was made now.
        case attached(token: UInt64, first: UInt64, made: Bool)
        /// A consumer could not be set up.
        case attachFailed(token: UInt64, NATSError)
        /// Messages fetched for a consumer.
        case fetched(token: UInt64, [JetStreamMessage])
        /// A fetch failed; the worker goes on trying.
        case fetchFailed(token: UInt64, NATSError)
        /// JetStream did not store a REQ's query.
        case queryRefused(token: String, NATSError)
        /// A message on this gateway's reply subject: a `reply` or an unanswered `query`.
        case replied([UInt8])
        /// Reading the reply subject failed; the listener goes on trying.
        case replyListenerFailed(NATSError)
        /// A STATS reply, its cluster figures gathered, for every STATS the gathering answers.
        case statsReady([UInt8])
    }

    private let events = Mutex<[Event]>([])
    let wakeup: EventFD

    init() throws(ZMQError) {
        wakeup = try EventFD()
    }

    /// Queues `event` and wakes the loop; safe from any thread, never blocks for long.
    func post(_ event: Event) {
        events.withLock { $0.append(event) }
        wakeup.signal()
    }

    /// Everything queued, oldest first (the loop drains the eventfd first).
    func take() -> [Event] {
        wakeup.drain()
        return events.withLock { events in
            defer { events.removeAll(keepingCapacity: true) }
            return events
        }
    }
}
