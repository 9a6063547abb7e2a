import Dispatch
import EventBus
import Foundation
import NATS
import Synchronization

/// The JetStream side of one attached consumer, on a thread of its own: it sets up the
/// durable pull consumer (blocking API calls), then fetches while the consumer has
/// credit, and hands everything to the loop through the ``GatewayInbox``.
///
/// The loop owns the credit's accounting: the worker starts with the CREDIT as permits,
/// spends one per message fetched, and gets them back through ``release(_:)`` when the
/// loop acks (or skips) messages. ``stop()`` ends the thread after its current fetch.
///
/// One attach at a time per durable: a worker made while an earlier one of the same NAME
/// still runs (a takeover, a CONSUME again, a consumer made again after a gap) waits for
/// that thread to end before it sets anything up. Two set-ups at once delete and create
/// each other's durable, and each CONSUME then fails and is tried again.
final class FetchWorker: Sendable {
    /// What to set up.
    struct Setup: Sendable {
        var stream: StageStream
        var durable: String
        var start: ConsumeRequest.Start
        var ackWait: Duration
        /// Whether a failed set-up is tried again until it succeeds or the worker stops
        /// (a consumer made again after a gap, whose client already has its OK) rather
        /// than reported (a CONSUME, answered `busy`).
        var retriesSetUp = false
        /// Whether a `.sequence` start above the stream's head + 1 starts there instead (a
        /// skip ahead past the head), so that no event published later is passed over.
        var atMostHeadPlusOne = false
        /// How long one set-up may try (the gateway's request timeout): its JetStream
        /// calls are tried again with short waits within it (``CallWaits``).
        var budget = Duration.seconds(5)
    }

    private struct State {
        var permits: Int
        var stopped = false
        var ended = false
    }

    let token: UInt64
    private let state: Mutex<State>
    private let wakeup = DispatchSemaphore(value: 0)
    /// Signalled when the thread ends, for a successor waiting in ``awaitEnd()``.
    private let end = DispatchSemaphore(value: 0)
    /// The longest a fetch waits for messages, and so the longest ``stop()`` takes.
    static let fetchWait = Duration.milliseconds(500)
    /// The most messages one fetch asks for.
    static let fetchBatch = 256

    /// Starts the worker's thread; with `previous` (the last worker of the same NAME), only
    /// once that one's thread has ended.
    init(token: UInt64, credit: Int, setup: Setup, jetStream: JetStream, inbox: GatewayInbox, after previous: FetchWorker? = nil) {
        self.token = token
        self.state = Mutex(State(permits: credit))
        let thread = Thread { [self] in
            previous?.awaitEnd()
            if !isStopped { run(setup: setup, jetStream: jetStream, inbox: inbox) }
            state.withLock { $0.ended = true }
            end.signal()
        }
        thread.name = "eventbus-fetch \(setup.durable)"
        thread.start()
    }

    /// Gives back `count` permits (messages acked or skipped).
    func release(_ count: Int) {
        guard count > 0 else { return }
        state.withLock { $0.permits += count }
        wakeup.signal()
    }

    /// Ends the thread after its current fetch; what that fetch brings is still posted,
    /// for the loop to nak.
    func stop() {
        state.withLock { $0.stopped = true }
        wakeup.signal()
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    /// Whether the thread has ended.
    var hasEnded: Bool { state.withLock { $0.ended } }

    /// Blocks until the thread has ended (at once if it has).
    func awaitEnd() {
        end.wait()
        end.signal()  // for any other waiter, and for the next look
    }

    private func run(setup: Setup, jetStream: JetStream, inbox: GatewayInbox) {
        var consumer: PullConsumer?
        while consumer == nil {
            do {
                // Tried again with short waits within the budget: a set-up may safely be made
                // twice (a try cut short after its delete or create finds the durable and
                // places it again).
                let (bound, first, made) = try ClusterWarmUp.retry("set up consumer \(setup.durable)", on: jetStream,
                                                                   wait: setup.budget) { context throws(NATSError) in
                    try Self.attach(setup, jetStream: context)
                }
                consumer = bound
                inbox.post(.attached(token: token, first: first, made: made))
            } catch {
                guard setup.retriesSetUp else {
                    inbox.post(.attachFailed(token: token, error))
                    return
                }
                inbox.post(.fetchFailed(token: token, error))
                pauseAfterFailure()
                if isStopped { return }
            }
        }
        guard let consumer else { return }
        while true {
            let permits = state.withLock { state -> Int? in
                if state.stopped { return nil }
                let taken = min(state.permits, Self.fetchBatch)
                state.permits -= taken
                return taken
            }
            guard let permits else { return }
            if permits == 0 {
                _ = wakeup.wait(timeout: .now() + .milliseconds(200))
                continue
            }
            do {
                let messages = try consumer.fetch(batch: permits, timeout: Self.fetchWait)
                release(permits - messages.count)
                if !messages.isEmpty { inbox.post(.fetched(token: token, messages)) }
            } catch {
                release(permits)
                inbox.post(.fetchFailed(token: token, error))
                // A cluster without a leader fails at once: do not spin.
                if !isStopped { pauseAfterFailure() }
            }
        }
    }

    /// Half a second, unless ``stop()`` or a release comes meanwhile. The releases signalled
    /// while the worker was fetching are dropped first: one per ACK, thousands of them, they
    /// made this wait return at once as often (4,021 failed fetches logged in one failover).
    private func pauseAfterFailure() {
        while wakeup.wait(timeout: .now()) == .success {}
        if isStopped { return }
        _ = wakeup.wait(timeout: .now() + .milliseconds(500))
    }

    /// Creates, recreates or binds the durable consumer for `setup.start`; returns it, the
    /// OK's FIRST (docs/protocol.md, "CONSUME") and whether it was made now (false: an
    /// existing one bound as it was, for `resume`).
    ///
    /// `resume` binds to the consumer as it is (its position is the last ACK), or, if it
    /// has events delivered and not acked, makes it again right after the last ACK;
    /// `earliest`, `latest` and a SEQ start it again from there, which on JetStream means
    /// deleting the durable and creating it anew at that stream sequence.
    static func attach(_ setup: Setup, jetStream: JetStream) throws(NATSError) -> (PullConsumer, UInt64, Bool) {
        let info = try jetStream.streamInfo(setup.stream.name)
        let firstInStream = max(info.firstSequence, 1)
        let head = info.lastSequence
        var existing: ConsumerInfo?
        do {
            existing = try jetStream.consumerInfo(stream: setup.stream.name, durable: setup.durable)
        } catch where error.isNotFound {
            existing = nil
        }
        // JetStream stops delivering at `max_ack_pending` unacked messages (1,000 by default):
        // raised to the most an EB1 CREDIT allows, so that the CREDIT alone bounds what a
        // consumer has unacked, as on the broker.
        func config(_ start: DeliverStart) -> PullConsumerConfig {
            PullConsumerConfig(stream: setup.stream.name, durable: setup.durable, filterSubject: setup.stream.subject,
                               ackWait: setup.ackWait, start: start, maxAckPending: WireProtocol.maxCredit)
        }
        let first: UInt64
        switch setup.start {
        case .resume:
            guard let existing else {
                first = firstInStream
                break
            }
            let afterLastAck = max(existing.ackFloorStreamSequence + 1, firstInStream)
            // Events delivered and never acked: held by an attachment that is gone (a
            // gateway that died cannot nak them), JetStream would give them again only
            // after the ack wait. Made again at the last ACK, they come at once, as a
            // broker's resume sends them.
            if existing.ackPending > 0 {
                first = afterLastAck
                break
            }
            let consumer = try PullConsumer(jetStream: jetStream, config: config(.all), create: false)
            return (consumer, afterLastAck, false)
        case .earliest: first = firstInStream
        case .latest: first = head + 1
        case .sequence(let seq):
            first = setup.atMostHeadPlusOne ? min(max(seq, firstInStream), head + 1) : max(seq, firstInStream)
        }
        if existing != nil { try jetStream.deleteConsumer(stream: setup.stream.name, durable: setup.durable) }
        let consumer = try PullConsumer(jetStream: jetStream, config: config(.sequence(first)))
        return (consumer, first, true)
    }
}
