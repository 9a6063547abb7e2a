import EventBus
import Logging

/// The plugin runner's protocol bookkeeping, as a value-type state machine with no I/O:
/// the runner's counterpart of the client's ``ClientState``.
///
/// The runner's thread owns the socket and the plugin; it feeds this what happens (a
/// new connection, a reply, a batch handled, the clock) and carries out the
/// ``Action``s it returns. It keeps the connection's phase (HELLO and CONSUME awaiting
/// their replies, then consuming), what the broker's HELLO offers, the output awaiting
/// its confirms (``PublishWindow``) with the retries of PUBs the broker found `busy`,
/// and the PING of an idle connection. Every frame it asks to send is built by
/// ``ClientFrames``; every reply comes to it parsed by ``ClientFrames`` (through
/// ``InboundReader``). Events do not pass through it: the runner takes them as they
/// are decoded, where libzmq received them.
struct RunnerState {
    /// Something for the runner's thread to do.
    enum Action {
        /// Send `frames` on the connection.
        case send([[UInt8]])
        /// Close the connection and open a new one, then call ``connecting(now:)``.
        case reconnect
        /// These batches' output is confirmed and their ACK sent: count them.
        case settled([PublishWindow.Batch])
        /// Write a log line.
        case log(Logger.Level, Logger.Message, Logger.Metadata)
    }

    /// Where the connection stands.
    enum Phase: Equatable {
        /// No connection yet, or the last one was given up.
        case disconnected
        /// HELLO and CONSUME are sent; output waits for CONSUME's OK, or a new connection after `deadline`.
        case connecting(hello: UInt64, consume: UInt64, deadline: ContinuousClock.Instant)
        /// CONSUME was answered: events come, output goes.
        case consuming
        /// CONSUME was refused `busy` (a JetStream gateway whose cluster is electing): a new
        /// connection asks again at `until`.
        case backingOff(until: ContinuousClock.Instant)
    }

    /// The PING of an idle connection, awaiting its reply.
    struct Ping: Equatable {
        let request: UInt64
        let deadline: ContinuousClock.Instant
    }

    /// The plugin's name, stages, credit and confirm timeout.
    let configuration: PluginConfiguration
    /// The services the plugin answers, declared in each HELLO.
    let services: [String]
    /// Whether the plugin's state is committed: a consumer that never applied anything then
    /// starts at the earliest event, since its state must fold the whole history.
    let persistent: Bool
    /// How long a new connection may take to answer HELLO (a broker that is not there).
    var connectTimeout: Duration = .seconds(2)
    /// How long CONSUME may take once HELLO was answered: the peer is there, and setting up
    /// a consumer may take a JetStream gateway seconds (a consumer made on a replicated
    /// stream while the cluster elects leaders). Asking again sooner would start another
    /// set-up of the same consumer beside the first.
    var consumeTimeout: Duration = .seconds(30)
    /// How long a connection with nothing in flight may stay silent before a PING.
    var idleAfter: Duration = .seconds(2)
    /// How long a PING may wait for its reply.
    var pingTimeout: Duration = .seconds(3)
    /// The runner is stopping: a chunk the broker keeps refusing as `busy` then ends the run.
    var stopping = false
    /// The first wait after a CONSUME refused `busy`; each refusal in a row doubles it, up
    /// to ``consumeRetryLimit``.
    var consumeRetryDelay: Duration = .milliseconds(250)
    var consumeRetryLimit: Duration = .seconds(4)

    private(set) var phase = Phase.disconnected
    /// The SEQ of the last input event handled; CONSUME resumes after it.
    private(set) var appliedSeq: UInt64
    /// Output sent and not yet confirmed, by batch.
    private(set) var window = PublishWindow()
    /// Whether the broker forwards by reference (HELLO lists `forward`): a passed event goes as `@SEQ`.
    private(set) var forwardsByReference = false
    /// Whether the broker takes a chunk's events in one frame (HELLO lists `pubs`).
    private(set) var publishesBatches = false
    private(set) var ping: Ping?
    /// Chunks the broker answered `busy`, with when to send them again.
    private(set) var retries: [PublishWindow.Place: ContinuousClock.Instant] = [:]
    private var nextRequest: UInt64 = 1
    /// CONSUMEs refused `busy` in a row.
    private var busyConsumes = 0
    private var offered: Set<String> = []
    private var lastTraffic: ContinuousClock.Instant
    /// When the last of this plugin's output was confirmed: a front that queues output (the
    /// JetStream gateway answers a connection's PUBs one at a time) is slow, not gone, while
    /// confirms keep coming.
    private var lastConfirm: ContinuousClock.Instant?

    init(configuration: PluginConfiguration, services: [String], persistent: Bool, appliedSeq: UInt64,
         now: ContinuousClock.Instant) {
        self.configuration = configuration
        self.services = services
        self.persistent = persistent
        self.appliedSeq = appliedSeq
        self.lastTraffic = now
    }

    private var confirmTimeout: Duration { .milliseconds(configuration.confirmTimeoutMilliseconds) }

    private mutating func takeRequestNumber() -> UInt64 {
        defer { nextRequest += 1 }
        return nextRequest
    }

    // MARK: Connection

    /// A new connection: HELLO (batched delivery, compact confirms, ordered publishing, the plugin's services),
    /// then CONSUME after the last applied SEQ. Output waits for CONSUME's OK.
    mutating func connecting(now: ContinuousClock.Instant) -> [Action] {
        lastConfirm = nil
        let hello = takeRequestNumber(), consume = takeRequestNumber()
        phase = .connecting(hello: hello, consume: consume, deadline: now + connectTimeout)
        ping = nil
        retries = [:]
        offered = []
        window.forgetRequests()
        lastTraffic = now
        let start: ConsumeStart = appliedSeq > 0 ? .seq(appliedSeq + 1) : (persistent ? .earliest : .resume)
        let body = ClientFrames.helloBody(
            name: configuration.name, role: "plugin", version: "1", batch: true, compactOK: true, ordered: true, services: services)
        return [
            .send(ClientFrames.hello(request: hello, body: body)),
            .send(ClientFrames.consume(request: consume, name: configuration.name, start: start,
                                       credit: configuration.credit, prefixes: ["\(configuration.inputStage)/"])),
        ]
    }

    /// A message came that the runner took itself (its events): the connection is alive.
    mutating func heard(now: ContinuousClock.Instant) {
        lastTraffic = now
    }

    /// Since when output has waited for a confirm with none arriving: the oldest unconfirmed
    /// send, or the last confirm if one came after it. The confirm timeout counts from there,
    /// so it catches a connection gone silent, not a long queue that is moving.
    private var confirmWaitingSince: ContinuousClock.Instant? {
        guard let oldest = window.oldestSend else { return nil }
        guard let lastConfirm else { return oldest }
        return max(oldest, lastConfirm)
    }

    // MARK: Replies

    /// A message other than the events, as ``ClientFrames`` parsed it.
    ///
    /// - Throws: When the run must end: CONSUME refused for a reason other than `busy`, the
    ///   consumer taken over (`END`), output refused for a reason other than `busy`.
    mutating func received(_ message: ClientFrames.Inbound, now: ContinuousClock.Instant) throws(PluginError) -> [Action] {
        lastTraffic = now
        switch message {
        case .ok(let corr, let body):
            guard let number = ClientFrames.requestNumber(corr) else { return [] }
            if let place = window.answered(request: number) {
                window.confirm(place)
                lastConfirm = now
                return []
            }
            return answered(number, body: body, now: now)
        case .err(let corr, let error):
            if let seq = ClientFrames.ackedSeq(corr) {
                return [.log(.warning, "ACK of SEQ \(seq) failed", ["bus.reply": "\(error)"])]
            }
            if let number = ClientFrames.requestNumber(corr), let place = window.answered(request: number) {
                return try refused(place, error, now: now)
            }
            return try failed(ClientFrames.requestNumber(corr), error, now: now)
        case .end(let name, let reason):
            throw PluginError("consumer \(name) was taken over by another process: \(reason)")
        case .event, .events:
            return []
        case .malformed(let what):
            return [.log(.warning, "malformed message from the broker dropped", ["bus.reply": "\(what)"])]
        }
    }

    /// An OK for a request other than a PUB of the window.
    private mutating func answered(_ number: UInt64, body: [[UInt8]], now: ContinuousClock.Instant) -> [Action] {
        switch phase {
        case .connecting(let hello, let consume, _) where number == hello:
            offered = body.first.map(WireProtocol.helloFeatures) ?? []
            phase = .connecting(hello: hello, consume: consume, deadline: now + consumeTimeout)
            return []
        case .connecting(_, let consume, _) where number == consume:
            phase = .consuming
            busyConsumes = 0
            forwardsByReference = offered.contains("forward")
            publishesBatches = offered.contains("pubs")
            let first = body.first.flatMap(ClientFrames.parseDecimal) ?? 0
            var actions: [Action] = []
            if appliedSeq > 0 && first > appliedSeq + 1 {
                actions.append(.log(.error, "events were removed by retention before this plugin applied them",
                                    ["bus.seq": "\(appliedSeq + 1)..\(first - 1)"]))
            }
            actions.append(.log(.info, "plugin consuming", [
                "bus.stage": "\(configuration.inputStage)", "bus.output": "\(configuration.outputStage)", "bus.seq": "\(first)",
            ]))
            // The output a lost connection left unconfirmed, again and in order: the broker drops repeats by id.
            for place in window.unconfirmedForResend() { actions.append(send(place, now: now)) }
            return actions
        default:
            if ping?.request == number { ping = nil }
            return []
        }
    }

    /// An ERR for a request other than a PUB of the window.
    private mutating func failed(_ number: UInt64?, _ error: BusError, now: ContinuousClock.Instant) throws(PluginError) -> [Action] {
        switch phase {
        case .connecting(let hello, _, _) where number == hello:
            // Events come one EVT at a time then, and output as PUBs of whole events.
            return [.log(.warning, "HELLO refused; going on without the broker's extensions", ["bus.reply": "\(error)"])]
        case .connecting(_, let consume, _) where number == consume:
            // `busy` passes (a gateway's cluster electing leaders, or a consumer still being
            // set up for an earlier attachment): asked again on a new connection, after a
            // wait that doubles with each refusal in a row. Exiting instead would make the
            // supervisor count a quick exit per election.
            guard error.code == .busy, !stopping else {
                throw PluginError("CONSUME \(configuration.inputStage)/ refused: \(error)")
            }
            let delay = min(consumeRetryDelay * (1 << min(busyConsumes, 16)), consumeRetryLimit)
            busyConsumes += 1
            phase = .backingOff(until: now + delay)
            return [.log(.warning, "CONSUME refused busy; asking again", [
                "bus.reply": "\(error)", "bus.retry_ms": "\(Int(delay / .milliseconds(1)))",
            ])]
        default:
            if let number, ping?.request == number {
                ping = nil  // answered all the same: the broker is there
                return []
            }
            return [.log(.warning, "broker refused a request", ["bus.reply": "\(error)"])]
        }
    }

    /// An ERR for the chunk at `place`: `busy` is sent again (at once the first time, then
    /// after a growing delay up to a second); anything else ends the run.
    ///
    /// Output keeps its order through refusals: the broker, asked for ordered publishing
    /// in HELLO, refuses every later PUB until the refused one comes again, and the chunks
    /// waiting to go again go in order (``tick(now:)``), never one before an earlier one.
    private mutating func refused(_ place: PublishWindow.Place, _ error: BusError, now: ContinuousClock.Instant) throws(PluginError) -> [Action] {
        let chunk = window.chunk(place)
        guard error.code == .busy else {
            throw PluginError("the broker refused output of \(configuration.name) to \(chunk.stage): \(error)")
        }
        if stopping && chunk.attempts > 50 { throw PluginError("stopping with unconfirmed output") }
        if chunk.attempts > 1 || retries.keys.contains(where: { Self.before($0, place) }) {
            retries[place] = now + .milliseconds(chunk.attempts > 1 ? min(1_000, 10 * chunk.attempts) : 0)
            return []
        }
        return [send(place, now: now)]
    }

    /// Whether the chunk at `a` comes before the one at `b` in the output.
    static func before(_ a: PublishWindow.Place, _ b: PublishWindow.Place) -> Bool { (a.batch, a.chunk) < (b.batch, b.chunk) }

    // MARK: Output

    /// The plugin handled a batch up to input `lastSeq`: its output joins the window and goes
    /// out in chunks within the PUB limits (once CONSUME is answered, when connecting).
    mutating func publish(
        lastSeq: UInt64, inputs: Int, started: ContinuousClock.Instant,
        outputs: [(stage: String, events: [OutgoingEvent])], now: ContinuousClock.Instant
    ) -> [Action] {
        appliedSeq = lastSeq
        let places = window.add(lastSeq: lastSeq, inputs: inputs, started: started, outputs: outputs,
                                maxEvents: WireProtocol.maxBatchEvents, maxBytes: WireProtocol.maxBatchBytes - 65_536)
        guard phase == .consuming else { return [] }
        // Behind chunks waiting to go again: after them, in order (``refused``).
        guard retries.isEmpty else {
            for place in places { retries[place] = now }
            return []
        }
        return places.map { send($0, now: now) }
    }

    /// The chunk at `place` as one PUB, or as one PUBS when the broker takes it and the chunk
    /// has more than one event.
    private mutating func send(_ place: PublishWindow.Place, now: ContinuousClock.Instant) -> Action {
        let number = takeRequestNumber()
        let chunk = window.chunk(place)
        let events = chunk.events.map { $0.frame(byReference: forwardsByReference) }
        window.sent(place, request: number, now: now)
        if publishesBatches && events.count > 1 {
            return .send(ClientFrames.publishBatch(request: number, stage: chunk.stage, events: events))
        }
        return .send(ClientFrames.publish(request: number, stage: chunk.stage, events: events))
    }

    /// ACKs the batches whose output is all confirmed, oldest first: one ACK names the last.
    mutating func settle() -> [Action] {
        guard phase == .consuming else { return [] }
        let settled = window.removeSettled()
        guard let last = settled.last else { return [] }
        return [.send(ClientFrames.ack(name: configuration.name, seq: last.lastSeq)), .settled(settled)]
    }

    /// Whether the next batch of `batchSize` events may be handled before more output is confirmed.
    func hasRoom(batchSize: Int) -> Bool {
        window.hasRoom(batchSize: batchSize, credit: configuration.credit)
    }

    // MARK: Time

    /// Gives up a connection that does not answer CONSUME, a PING or a confirm in time
    /// (the broker restarted or the link broke); sends the `busy` chunks whose delay is
    /// over; PINGs a connection that has been idle.
    mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        switch phase {
        case .disconnected:
            return []
        case .connecting(_, _, let deadline):
            guard now >= deadline else { return [] }
            phase = .disconnected
            return [.log(.warning, "broker not answering; retrying", ["bus.endpoint": "\(configuration.commandEndpoint)"]), .reconnect]
        case .backingOff(let until):
            guard now >= until else { return [] }
            phase = .disconnected
            return [.reconnect]
        case .consuming:
            break
        }
        if let ping, now >= ping.deadline {
            phase = .disconnected
            return [.log(.warning, "broker silent; reconnecting", [:]), .reconnect]
        }
        if let waiting = confirmWaitingSince, now - waiting >= confirmTimeout {
            phase = .disconnected
            return [.log(.warning, "no confirm in time; reconnecting", [:]), .reconnect]
        }
        var actions: [Action] = []
        if !retries.isEmpty {
            // In output order, up to the first that is not due: none goes before an earlier one.
            for place in retries.keys.sorted(by: Self.before) {
                guard let due = retries[place], now >= due else { break }
                retries[place] = nil
                if window.isUnconfirmed(place) { actions.append(send(place, now: now)) }
            }
        }
        if window.isEmpty && ping == nil && now - lastTraffic >= idleAfter {
            let number = takeRequestNumber()
            ping = Ping(request: number, deadline: now + pingTimeout)
            actions.append(.send(ClientFrames.ping(request: number)))
        }
        return actions
    }

    /// The next instant at which ``tick(now:)`` has something to do, or `nil`.
    var nextDeadline: ContinuousClock.Instant? {
        switch phase {
        case .disconnected:
            return nil
        case .connecting(_, _, let deadline):
            return deadline
        case .backingOff(let until):
            return until
        case .consuming:
            var next = ping?.deadline
            func consider(_ instant: ContinuousClock.Instant) { next = next.map { min($0, instant) } ?? instant }
            if let waiting = confirmWaitingSince { consider(waiting + confirmTimeout) }
            // The first chunk waiting to go again (in output order) holds the others back.
            if let first = retries.keys.min(by: Self.before), let instant = retries[first] { consider(instant) }
            if window.isEmpty && ping == nil { consider(lastTraffic + idleAfter) }
            return next
        }
    }
}
