import Logging

/// The client's protocol bookkeeping, as a value-type state machine with no I/O.
///
/// The I/O thread feeds it what happens (a call, a message, a connection event, the
/// clock) and carries out the ``Action``s it returns. It keeps the requests waiting
/// for their replies (by CORR), the durable consumers and their offsets, and decides
/// what to resend and when. `Waiter` is what resumes a caller (a continuation);
/// `Sink` is where a consumer's deliveries go. Tests use plain values for both.
package struct ClientState<Waiter, Sink> {
    /// Something for the I/O thread to do.
    package enum Action {
        /// Send `frames`; when the socket refuses it (high-water mark), report
        /// ``ClientState/sendFailed(request:)`` with `request` if it is not `nil`.
        case send(request: UInt64?, frames: [[UInt8]])
        /// Resume a caller.
        case complete(Waiter, Result<[[UInt8]], BusError>)
        /// Hand a delivery to a consumer.
        case deliver(Sink, Delivery)
        /// End a consumer's sequence: with an error, or normally (`endReason` set when the broker sent `END`).
        case finish(Sink, error: BusError?, endReason: String?)
        /// Write a log line.
        case log(Logger.Level, Logger.Message)
    }

    /// A request waiting for its reply.
    struct Pending {
        let verb: Verb
        let frames: [[UInt8]]
        /// `nil` for the client's own requests (a re-`CONSUME` after a reconnect).
        let waiter: Waiter?
        let deadline: ContinuousClock.Instant
        /// When to send it again if no reply came; `nil` when it is not idempotent.
        var resendAt: ContinuousClock.Instant?
        /// Not sent yet: the socket refused it (sent again at ``retryAt``), or the
        /// connection was lost (sent, in order, once it is back).
        var needsSend = false
        /// When to try a refused send again.
        var retryAt: ContinuousClock.Instant?
        /// For `CONSUME` (the caller's or the client's own), the consumer's name.
        let consumer: String?
    }

    /// A durable consumer of this client.
    struct Consumer {
        let sink: Sink
        let prefixes: [String]
        let credit: Int
        let start: ConsumeStart
        /// The highest SEQ acked by the application.
        var lastAcked: UInt64?
        /// The highest SEQ handed to the application; lower or equal ones are dropped.
        var highestDelivered: UInt64?
        /// The first `CONSUME` got its `OK`.
        var active = false
    }

    let endpoint: String
    let requestTimeout: Duration
    let resendAfter: Duration
    private(set) var nextRequest: UInt64 = 1
    private(set) var pending: [UInt64: Pending] = [:]
    private(set) var consumers: [String: Consumer] = [:]
    /// Whether this connection has asked for batched delivery (`HELLO {"batch": true}`).
    private var askedForBatches = false
    /// Whether the broker's answer to that HELLO listed `pubs`: a batch of events then goes
    /// as one `PUBS` (docs/protocol.md, "Batched publish") instead of a `PUB` of one frame each.
    private(set) var offersPubs = false
    /// The connection was lost and has not come back yet.
    private(set) var lostConnection = false
    /// The socket refused a send: later requests wait behind it, so that they go out in order.
    private(set) var holdingBack = false

    /// Whether each connection asks for ordered publishing, before its first `PUB`.
    let ordered: Bool

    package init(endpoint: String, requestTimeout: Duration, resendAfter: Duration, ordered: Bool = false) {
        self.endpoint = endpoint
        self.requestTimeout = requestTimeout
        self.resendAfter = resendAfter
        self.ordered = ordered
    }

    // MARK: Calls

    /// A request from a caller: `verb` with `arguments`, answered through `waiter`.
    package mutating func request(_ verb: Verb, _ arguments: [[UInt8]], waiter: Waiter, now: ContinuousClock.Instant) -> [Action] {
        let idempotent = verb == .pub || verb == .pubs || verb == .stats || verb == .ping || verb == .hello
        guard verb == .pub else {
            return register(verb, arguments, waiter: waiter, consumer: nil, idempotent: idempotent, now: now)
        }
        // A publisher learns from the HELLO's answer whether the broker takes PUBS; until
        // then (and from a broker without it) a batch goes as a PUB.
        if offersPubs && arguments.count > 2 {
            let batch = [arguments[0], PublishBatch.encode(arguments.dropFirst())]
            return register(.pubs, batch, waiter: waiter, consumer: nil, idempotent: true, now: now)
        }
        let hello = askForBatches()
        let pub = register(verb, arguments, waiter: waiter, consumer: nil, idempotent: true, now: now)
        // Ordered publishing must be asked for before the first PUB it is to cover.
        return ordered ? hello + pub : pub + hello
    }

    /// A caller's `CONSUME`: registers the consumer (so that deliveries arriving right
    /// after the `OK` find it) and sends the request.
    mutating func consume(
        name: String, start: ConsumeStart, credit: Int, prefixes: [String],
        waiter: Waiter, sink: Sink, now: ContinuousClock.Instant
    ) -> [Action] {
        if consumers[name] != nil {
            return [.complete(waiter, .failure(BusError(.badArgs, "consumer \(name) is already active on this client")))]
        }
        consumers[name] = Consumer(sink: sink, prefixes: prefixes, credit: credit, start: start)
        let arguments = ClientFrames.consumeArguments(name: name, start: start, credit: credit, prefixes: prefixes)
        return askForBatches() + register(.consume, arguments, waiter: waiter, consumer: name, idempotent: false, now: now)
    }

    /// `HELLO {"batch": true}` once per connection, before its first `CONSUME` (so that its
    /// consumers get `EVTS` messages of many events instead of one `EVT` each) or after its
    /// first `PUB` (whose answer tells whether the broker takes `PUBS`).
    private mutating func askForBatches() -> [Action] {
        // A lost connection asks again once it is back (``connected(now:)``).
        guard !askedForBatches, !lostConnection else { return [] }
        askedForBatches = true
        return [.send(request: nil, frames: ordered ? ClientFrames.orderedBatchHello : ClientFrames.batchHello)]
    }

    /// The application is done with every event of consumer `name` up to `seq`.
    mutating func ack(name: String, seq: UInt64) -> [Action] {
        guard var consumer = consumers[name] else {
            return [.log(.debug, "ACK \(seq) for consumer \(name), which is no longer active, not sent")]
        }
        consumer.lastAcked = max(consumer.lastAcked ?? 0, seq)
        consumers[name] = consumer
        return [.send(request: nil, frames: ClientFrames.ack(name: name, seq: seq))]
    }

    /// Stops consumer `name`: its sequence ends now, and `CANCEL` goes to the broker.
    mutating func cancel(name: String, waiter: Waiter, now: ContinuousClock.Instant) -> [Action] {
        guard let consumer = consumers.removeValue(forKey: name) else {
            return [.complete(waiter, .success([]))]
        }
        var actions: [Action] = [.finish(consumer.sink, error: nil, endReason: nil)]
        actions += register(.cancel, [Array(name.utf8)], waiter: waiter, consumer: name, idempotent: false, now: now)
        return actions
    }

    private mutating func register(
        _ verb: Verb, _ arguments: [[UInt8]], waiter: Waiter?, consumer: String?,
        idempotent: Bool, now: ContinuousClock.Instant
    ) -> [Action] {
        let number = nextRequest
        nextRequest += 1
        let frames = ClientFrames.request(verb, corr: ClientFrames.correlation(number), arguments)
        pending[number] = Pending(
            verb: verb, frames: frames, waiter: waiter, deadline: now + requestTimeout,
            resendAt: idempotent ? now + resendAfter : nil, needsSend: lostConnection || holdingBack,
            retryAt: holdingBack ? now : nil, consumer: consumer)
        // While the connection is lost, or the socket refused an earlier request, nothing goes
        // out: the earlier requests go first when it is back, then this one (order is kept).
        guard !lostConnection && !holdingBack else { return [] }
        return [.send(request: number, frames: frames)]
    }

    /// How soon a send the socket refused is tried again (the socket takes nothing until
    /// its connection's handshake is done).
    static var retryRefusedSendAfter: Duration { .milliseconds(10) }

    /// The socket refused request `number`; it is sent again at the next tick after
    /// ``retryRefusedSendAfter``, or when the connection is up.
    mutating func sendFailed(request number: UInt64, now: ContinuousClock.Instant) {
        pending[number]?.needsSend = true
        pending[number]?.retryAt = now + Self.retryRefusedSendAfter
        holdingBack = true
    }

    /// Every request not sent yet, in order (the socket took nothing of them, so none can
    /// overtake another): after a refusal or a loss.
    private mutating func sendHeldBack(now: ContinuousClock.Instant) -> [Action] {
        holdingBack = false
        var actions: [Action] = []
        for number in pending.keys.sorted() where pending[number]!.needsSend {
            // Safe: iterating over the keys of `pending`, which nothing removes here.
            pending[number]!.needsSend = false
            pending[number]!.retryAt = nil
            if pending[number]!.resendAt != nil { pending[number]!.resendAt = now + resendAfter }
            actions.append(.send(request: number, frames: pending[number]!.frames))
        }
        return actions
    }

    // MARK: Messages

    /// A message arrived on the DEALER.
    package mutating func received(_ frames: [[UInt8]]) -> [Action] {
        received(ClientFrames.parse(frames))
    }

    /// A message arrived on the DEALER, parsed (``InboundReader`` decodes an EVTS in place).
    package mutating func received(_ message: ClientFrames.Inbound) -> [Action] {
        switch message {
        case .ok(let corr, let body) where corr == ClientFrames.batchHelloCorrelation:
            offersPubs = body.first.map(WireProtocol.helloFeatures)?.contains("pubs") ?? false
            return []
        case .ok(let corr, let body):
            return replied(corr, .success(body))
        case .err(let corr, let error) where corr == ClientFrames.batchHelloCorrelation:
            // A broker without batched delivery: EVTs keep coming, one per event.
            return [.log(.info, "batched delivery refused (\(error.code.wire)); events come one at a time")]
        case .err(let corr, let error):
            if let seq = ClientFrames.ackedSeq(corr) {
                return [.log(.warning, "ACK of SEQ \(seq) failed: \(error.code.wire): \(error.message)")]
            }
            return replied(corr, .failure(error))
        case .event(let name, let delivery):
            return deliver([delivery], to: name)
        case .events(let name, let deliveries):
            return deliver(deliveries, to: name)
        case .end(let name, let reason):
            guard let consumer = consumers.removeValue(forKey: name) else { return [] }
            return [
                .log(.warning, "consumer \(name) ended by the broker: \(reason)"),
                .finish(consumer.sink, error: nil, endReason: reason),
            ]
        case .malformed(let what):
            return [.log(.warning, "malformed message from the broker dropped: \(what)")]
        }
    }

    /// Hands consumer `name` the deliveries it has not seen (after a reconnect, some come again).
    private mutating func deliver(_ deliveries: [Delivery], to name: String) -> [Action] {
        guard var consumer = consumers[name] else {
            return [.log(.debug, "\(deliveries.count) event(s) for consumer \(name), which is not active here, dropped")]
        }
        var actions: [Action] = []
        for delivery in deliveries {
            if let highest = consumer.highestDelivered, delivery.seq <= highest { continue }
            consumer.highestDelivered = delivery.seq
            actions.append(.deliver(consumer.sink, delivery))
        }
        consumers[name] = consumer
        return actions
    }

    private mutating func replied(_ corr: [UInt8], _ result: Result<[[UInt8]], BusError>) -> [Action] {
        guard let number = ClientFrames.requestNumber(corr), let request = pending.removeValue(forKey: number) else {
            // A late reply to a request that was resent, timed out or cancelled.
            return [.log(.debug, "reply for a CORR no longer waiting dropped")]
        }
        var actions: [Action] = []
        if request.verb == .consume, let name = request.consumer {
            switch result {
            case .success:
                consumers[name]?.active = true
            case .failure(let error):
                if let consumer = consumers.removeValue(forKey: name) {
                    if request.waiter == nil {
                        actions.append(.log(.error, "resuming consumer \(name) failed: \(error.code.wire): \(error.message)"))
                    }
                    actions.append(.finish(consumer.sink, error: error, endReason: nil))
                }
            }
        }
        if let waiter = request.waiter { actions.append(.complete(waiter, result)) }
        return actions
    }

    // MARK: Connection

    /// The monitor reported the connection lost.
    mutating func disconnected() -> [Action] {
        lostConnection = true
        askedForBatches = false
        offersPubs = false
        return [.log(.warning, "connection to \(endpoint) lost; reconnecting")]
    }

    /// The monitor reported a connection. After a loss, resends every request still
    /// waiting (same CORR) and resumes every consumer from its last ACK.
    mutating func connected(now: ContinuousClock.Instant) -> [Action] {
        guard lostConnection else {
            // The first connection: what the socket refused before it, in order.
            return [.log(.debug, "connected to \(endpoint)")] + sendHeldBack(now: now)
        }
        lostConnection = false
        holdingBack = false
        var actions: [Action] = [.log(.info, "reconnected to \(endpoint); resending \(pending.count) request(s)")]
        // The new connection asks for batches again before any CONSUME or PUB goes out on it.
        if !consumers.isEmpty || pending.values.contains(where: { $0.verb == .pub || $0.verb == .pubs }) {
            actions += askForBatches()
        }
        for number in pending.keys.sorted() {
            // Safe: iterating over the keys of `pending`, which nothing removes here.
            var request = pending[number]!
            if request.verb == .cancel {
                // The consumer lived on the lost connection; there is nothing left to cancel.
                pending[number] = nil
                if let waiter = request.waiter { actions.append(.complete(waiter, .success([]))) }
                continue
            }
            if request.waiter == nil && request.verb == .consume {
                // A resume for the previous connection; a fresh one follows below.
                pending[number] = nil
                continue
            }
            request.needsSend = false
            request.retryAt = nil
            if request.resendAt != nil { request.resendAt = now + resendAfter }
            pending[number] = request
            actions.append(.send(request: number, frames: request.frames))
        }
        for name in consumers.keys.sorted() {
            // Safe: iterating over the keys of `consumers`, which nothing removes here.
            let consumer = consumers[name]!
            guard consumer.active else { continue }  // its first CONSUME was resent above
            let start = consumer.lastAcked.map { ConsumeStart.seq($0 + 1) } ?? consumer.start
            actions.append(.log(.info, "resuming consumer \(name) from \(start.wire)"))
            let arguments = ClientFrames.consumeArguments(
                name: name, start: start, credit: consumer.credit, prefixes: consumer.prefixes)
            actions += register(.consume, arguments, waiter: nil, consumer: name, idempotent: false, now: now)
            if let acked = consumer.lastAcked {
                actions.append(.send(request: nil, frames: ClientFrames.ack(name: name, seq: acked)))
            }
        }
        return actions
    }

    // MARK: Time

    /// Fails the requests past their deadline and resends the idempotent ones past `resendAfter`.
    package mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        // Refused sends go again together, in order, once the first of them is due.
        let retryHeldBack = holdingBack && !lostConnection
            && pending.values.contains { $0.needsSend && ($0.retryAt.map { now >= $0 } ?? true) }
        for number in pending.keys.sorted() {
            // Safe: iterating over the keys of `pending`; only this key is removed below.
            var request = pending[number]!
            if now >= request.deadline {
                pending[number] = nil
                let error = BusError(.timeout, "no reply from the broker at \(endpoint) to \(request.verb.rawValue) "
                    + "within \(Self.format(requestTimeout))")
                if let waiter = request.waiter {
                    actions.append(.complete(waiter, .failure(error)))
                } else if let name = request.consumer, let consumer = consumers.removeValue(forKey: name) {
                    actions.append(.log(.error, "resuming consumer \(name) failed: \(error.message)"))
                    actions.append(.finish(consumer.sink, error: error, endReason: nil))
                }
                continue
            }
            // While the connection is lost nothing is sent: ``connected(now:)`` resends in order.
            // Requests not sent yet wait for ``sendHeldBack(now:)``.
            guard !lostConnection, !request.needsSend else { continue }
            if request.resendAt.map({ now >= $0 }) ?? false {
                request.resendAt = now + resendAfter
                pending[number] = request
                actions.append(.send(request: number, frames: request.frames))
            }
        }
        if retryHeldBack { actions += sendHeldBack(now: now) }
        return actions
    }

    /// The next instant at which ``tick(now:)`` has something to do, or `nil`.
    package var nextDeadline: ContinuousClock.Instant? {
        var next: ContinuousClock.Instant?
        for request in pending.values {
            var due = request.deadline
            if let resend = request.resendAt { due = min(due, resend) }
            if let retry = request.retryAt { due = min(due, retry) }
            next = next.map { min($0, due) } ?? due
        }
        return next
    }

    /// The client is closing: fails every waiting request and ends every consumer.
    package mutating func shutdown(reason: BusError) -> [Action] {
        var actions: [Action] = []
        for number in pending.keys.sorted() {
            // Safe: iterating over the keys of `pending`.
            if let waiter = pending[number]!.waiter { actions.append(.complete(waiter, .failure(reason))) }
        }
        for name in consumers.keys.sorted() {
            // Safe: iterating over the keys of `consumers`.
            actions.append(.finish(consumers[name]!.sink, error: nil, endReason: nil))
        }
        pending = [:]
        consumers = [:]
        return actions
    }

    /// A duration as seconds with up to three decimals (`10 s`, `0.25 s`).
    static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let millis = attoseconds / 1_000_000_000_000_000
        if millis == 0 { return "\(seconds) s" }
        var fraction = String(millis)
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(seconds).\(fraction) s"
    }
}
