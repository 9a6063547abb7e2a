import DequeModule
import EventBus
import Foundation
import Logging
import Synchronization
import ZeroMQ

/// Runs a ``Plugin`` against the broker: the whole consume–handle–publish–commit–ack cycle.
///
/// One pass of the loop takes up to `batchSize` events of the input stage,
/// hands each to the plugin in SEQ order, publishes what it passed on or
/// emitted (PUB with confirm; the broker deduplicates repeats by id), then
/// ACKs the last SEQ and, every so often, commits the state with that SEQ.
/// After a crash the plugin restarts from its committed state and SEQ, handles
/// the events after it again, and republishes the same ids: effectively once.
///
/// The runner owns its socket on the thread that calls ``run()``.
public final class PluginRunner<P: Plugin>: @unchecked Sendable {
    public let plugin: P
    public let configuration: PluginConfiguration
    private let store: (any PluginStore)?
    private let logger: Logger
    private let stopRequested = Atomic<Bool>(false)
    private let context: Context

    // Owned by the thread inside run().
    private var socket: Socket?
    private var state: P.State
    private var appliedSeq: UInt64 = 0
    private var committedSeq: UInt64 = 0
    private var pending: Deque<PluginEvent> = []
    private var correlation: UInt64 = 0
    private var eventsSinceSnapshot = 0
    private var lastSnapshot = ContinuousClock.now
    private var lastTraffic = ContinuousClock.now
    private var output: PluginOutput
    private var awaiting: Set<[UInt8]> = []
    private var replies: [[UInt8]: [[UInt8]]] = [:]
    /// Output published and not yet confirmed, by batch.
    private var window = PublishWindow()
    /// Whether the broker said in HELLO that it forwards by reference (`@SEQ` frames).
    private var forwardsByReference = false
    /// Whether the broker takes a chunk's events in one BATCH frame (`PUBS`).
    private var publishesBatches = false
    private let metrics: PluginMetrics

    /// Prepares a runner; nothing connects until ``run()``.
    ///
    /// - Parameter store: Where the state is committed; by default a
    ///   ``FileSnapshotStore`` in the configuration's data directory when the
    ///   plugin's state is persistent.
    public init(plugin: P, configuration: PluginConfiguration, store: (any PluginStore)? = nil, logger: Logger) throws {
        self.plugin = plugin
        self.configuration = configuration
        self.logger = logger
        if let store {
            self.store = store
        } else if P.State.isPersistent {
            self.store = try FileSnapshotStore(directory: configuration.dataDirectory)
        } else {
            self.store = nil
        }
        context = try Context()
        state = plugin.initialState()
        output = PluginOutput(plugin: configuration.name)
        metrics = PluginMetrics(plugin: configuration.name, outputStage: configuration.outputStage)
    }

    /// Asks ``run()`` to finish the batch in hand, commit, and return. Safe from any thread.
    public func stop() { stopRequested.store(true, ordering: .releasing) }

    private var stopped: Bool { stopRequested.load(ordering: .acquiring) }

    /// The SEQ of the last input event applied (for tests and logs).
    public var lastAppliedSeq: UInt64 { appliedSeq }

    /// Serves until ``stop()``; throws when the plugin throws or the broker refuses its output.
    ///
    /// Batches await their confirms while the next is handled, as many as the
    /// consumer's credit holds (``PublishWindow/hasRoom(batchSize:credit:)``), so
    /// that a slower commit gathers more output instead of stalling the plugin;
    /// a batch is ACKed once all of its output is confirmed,
    /// in order, and the state is committed only when nothing is in flight, so
    /// that a committed SEQ never runs ahead of confirmed output.
    public func run() throws {
        try restore()
        try connect()
        defer {
            socket?.close()
            socket = nil
        }
        while !stopped {
            if snapshotDue { try drainWindow() }
            try commitIfDue(force: false)
            let batch = try nextBatch(waitMilliseconds: window.isEmpty ? 100 : 1)
            try settle()
            if batch.isEmpty {
                if window.isEmpty { try whenIdle() } else { try checkConfirmTimeout() }
                continue
            }
            let started = ContinuousClock.now
            output.removeAll()
            for event in batch {
                output.begin(event.seq)
                try plugin.handle(event, state: &state, output: &output)
                appliedSeq = event.seq
            }
            eventsSinceSnapshot += batch.count
            let places = window.add(
                lastSeq: appliedSeq, inputs: batch.count, started: started,
                outputs: [(configuration.outputStage, output.outgoing),
                          (Stage.diag, output.diagnostics.map { OutgoingEvent(bytes: $0) })],
                maxEvents: WireProtocol.maxBatchEvents, maxBytes: WireProtocol.maxBatchBytes - 65_536)
            for place in places { try sendChunk(place) }
            try settle()
            while !window.hasRoom(batchSize: configuration.batchSize, credit: configuration.credit) { try awaitConfirms() }
        }
        try drainWindow()
        try commitIfDue(force: true)
        logger.info("plugin stopped", metadata: ["bus.plugin": "\(configuration.name)", "bus.seq": "\(appliedSeq)"])
    }

    // MARK: State

    private func restore() throws {
        guard let store, let stored = try store.load() else { return }
        state = try P.State(snapshot: stored.snapshot)
        appliedSeq = stored.seq
        committedSeq = stored.seq
        logger.info("plugin state restored", metadata: ["bus.plugin": "\(configuration.name)", "bus.seq": "\(stored.seq)"])
    }

    /// Whether the state should be committed: many events or a long time since the last commit.
    private var snapshotDue: Bool {
        store != nil && appliedSeq > committedSeq
            && (eventsSinceSnapshot >= configuration.snapshotEveryEvents
                || ContinuousClock.now - lastSnapshot >= .seconds(configuration.snapshotIntervalSeconds))
    }

    /// Commits the state with the applied SEQ when due (or `force`), and only
    /// when every output up to that SEQ is confirmed.
    private func commitIfDue(force: Bool) throws {
        guard let store, appliedSeq > committedSeq, window.isEmpty else { return }
        guard force || snapshotDue else { return }
        let started = ContinuousClock.now
        try store.save(snapshot: state.snapshot(), seq: appliedSeq)
        metrics.snapshotted(nanoseconds: Self.nanoseconds(since: started))
        committedSeq = appliedSeq
        eventsSinceSnapshot = 0
        lastSnapshot = .now
    }

    private static func nanoseconds(since start: ContinuousClock.Instant) -> UInt64 {
        let elapsed = (ContinuousClock.now - start).components
        return UInt64(max(0, elapsed.seconds)) * 1_000_000_000 + UInt64(max(0, elapsed.attoseconds) / 1_000_000_000)
    }

    // MARK: Connection

    /// Connects (again) and attaches the consumer after the last applied SEQ.
    private func connect() throws {
        while !stopped {
            socket?.close()
            pending.removeAll()
            let socket = try Socket(context: context, type: .dealer)
            try socket.setLinger(0)
            try socket.setReceiveHighWaterMark(0)
            try socket.setSendHighWaterMark(0)
            try socket.setReconnectInterval(100)
            try configuration.curve?.apply(to: socket)
            try socket.connect(configuration.commandEndpoint)
            self.socket = socket
            let start = appliedSeq > 0 ? String(appliedSeq + 1) : (P.State.isPersistent ? "earliest" : "resume")
            var hello = JSONWriter()
            hello.beginObject()
            hello.key("name"); hello.string(configuration.name)
            hello.key("role"); hello.string("plugin")
            hello.key("version"); hello.string("1")
            hello.key("batch"); hello.bool(true)  // events come in EVTS messages
            hello.key("compact_ok"); hello.bool(true)  // a PUB's OK in one frame
            hello.key("services"); hello.beginArray(); for service in plugin.services { hello.string(service) }; hello.endArray()
            hello.endObject()
            let helloCorrelation = try send(.hello, [hello.bytes])
            let consumeCorrelation = try send(.consume, [
                Array(configuration.name.utf8), Array(start.utf8), Array(String(configuration.credit).utf8),
                Array("\(configuration.inputStage)/".utf8),
            ])
            let replies = try waitForReplies([helloCorrelation, consumeCorrelation], timeoutMilliseconds: 2_000)
            guard let consumed = replies[consumeCorrelation] else {
                logger.warning("broker not answering; retrying", metadata: ["bus.endpoint": "\(configuration.commandEndpoint)"])
                continue
            }
            guard consumed.count >= 4, consumed[1] == Verb.ok.bytes else {
                throw PluginError("CONSUME \(configuration.inputStage)/ refused: \(Self.describe(consumed))")
            }
            let features = replies[helloCorrelation].map(Self.features) ?? []
            forwardsByReference = features.contains("forward")
            publishesBatches = features.contains("pubs")
            let first = ASCIIDecimal.parse(consumed[3][...]) ?? 0
            if appliedSeq > 0 && first > appliedSeq + 1 {
                logger.error("events were removed by retention before this plugin applied them", metadata: [
                    "bus.plugin": "\(configuration.name)", "bus.seq": "\(appliedSeq + 1)..\(first - 1)",
                ])
            }
            logger.info("plugin consuming", metadata: [
                "bus.plugin": "\(configuration.name)", "bus.stage": "\(configuration.inputStage)",
                "bus.output": "\(configuration.outputStage)", "bus.seq": "\(first)",
            ])
            lastTraffic = .now
            return
        }
    }

    /// With nothing to do: PING now and then; reconnect when the broker is gone; commit on time.
    private func whenIdle() throws {
        try commitIfDue(force: false)
        guard ContinuousClock.now - lastTraffic >= .seconds(2) else { return }
        let ping = try send(.ping, [])
        if try waitForReplies([ping], timeoutMilliseconds: 3_000)[ping] == nil {
            logger.warning("broker silent; reconnecting", metadata: ["bus.plugin": "\(configuration.name)"])
            try connect()
        }
    }

    // MARK: Wire

    @discardableResult
    private func send(_ verb: Verb, _ arguments: [[UInt8]]) throws -> [UInt8] {
        correlation += 1
        let corr = Array(String(correlation).utf8)
        guard let socket else { throw PluginError("not connected") }
        try socket.send([WireProtocol.signature, verb.bytes, corr] + arguments)
        return corr
    }

    /// Takes the next batch: what is pending plus what the socket has, waiting up to
    /// `waitMilliseconds` for a first event.
    private func nextBatch(waitMilliseconds: Int) throws -> [PluginEvent] {
        if pending.isEmpty { try receive(timeoutMilliseconds: waitMilliseconds) }
        while pending.count < configuration.batchSize, try receive(timeoutMilliseconds: 0) {}
        var batch: [PluginEvent] = []
        batch.reserveCapacity(min(pending.count, configuration.batchSize))
        while batch.count < configuration.batchSize, let event = pending.popFirst() {
            if event.seq > appliedSeq { batch.append(event) }
        }
        return batch
    }

    /// Receives one message if one comes within the timeout; EVTs go to `pending`,
    /// replies to `replies`. Returns whether a message came.
    @discardableResult
    private func receive(timeoutMilliseconds: Int) throws -> Bool {
        guard let socket else { throw PluginError("not connected") }
        if timeoutMilliseconds > 0 {
            var poller = Poller()
            poller.add(socket)
            guard try poller.poll(timeoutMilliseconds: timeoutMilliseconds)[0].contains(.readable) else { return false }
        }
        // The frames are read in place; an EVTS batch (hundreds of KB) is decoded where
        // it lies rather than copied into an array first (which, past the allocator's
        // mmap threshold, cost a fresh mapping, its page faults and an munmap per batch).
        var frames: [[UInt8]] = []
        var batchComplete = true
        let received = try socket.receive(dontWait: true) { index, bytes in
            if index == 3 && frames.count == 3 && frames[0] == WireProtocol.signature && frames[1] == Verb.evts.bytes {
                batchComplete = DeliveryBatch.decode(bytes) { seq, topic, event in
                    pending.append(PluginEvent(seq: seq, topic: String(decoding: topic, as: UTF8.self), bytes: Array(event)))
                }
                frames.append([])
            } else {
                frames.append(Array(bytes))
            }
        }
        guard received != nil else { return false }
        lastTraffic = .now
        guard frames.count >= 3, frames[0] == WireProtocol.signature else { return true }
        switch frames[1] {
        case Verb.evt.bytes where frames.count == 6:
            guard let seq = ASCIIDecimal.parse(frames[3][...]) else { return true }
            pending.append(PluginEvent(seq: seq, topic: String(decoding: frames[4], as: UTF8.self), bytes: frames[5]))
        case Verb.evts.bytes where frames.count == 4:
            // NAME, then one BATCH frame of many events, decoded as it was received (above).
            if !batchComplete { logger.warning("malformed EVTS batch", metadata: ["bus.plugin": "\(configuration.name)"]) }
        case Verb.end.bytes:
            throw PluginError("consumer \(configuration.name) was taken over by another process: \(Self.describe(frames))")
        case Verb.ok.bytes, Verb.err.bytes:
            if let place = window.answered(frames[2]) {
                try answered(place, frames)
            } else if awaiting.contains(frames[2]) {
                replies[frames[2]] = frames
            } else if frames[1] == Verb.err.bytes {
                logger.warning("broker refused a request", metadata: ["bus.reply": "\(Self.describe(frames))"])
            }
        default:
            break
        }
        return true
    }

    /// Waits for the replies to `correlations`; returns those that came in time.
    private func waitForReplies(_ correlations: [[UInt8]], timeoutMilliseconds: Int) throws -> [[UInt8]: [[UInt8]]] {
        awaiting = Set(correlations)
        replies.removeAll()
        defer { awaiting.removeAll() }
        let deadline = ContinuousClock.now + .milliseconds(timeoutMilliseconds)
        while correlations.contains(where: { replies[$0] == nil }) {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { break }
            let milliseconds = max(1, Int(left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000))
            try receive(timeoutMilliseconds: min(milliseconds, 100))
        }
        let answered = replies
        replies.removeAll()
        return answered
    }

    // MARK: Output in flight

    /// Sends the chunk at `place` as one PUB, or, when the broker takes it and the chunk has
    /// more than one event, as one PUBS (its events in one BATCH frame).
    private func sendChunk(_ place: PublishWindow.Place) throws {
        let chunk = window.chunk(place)
        let events = chunk.events.map { $0.frame(byReference: forwardsByReference) }
        if publishesBatches && events.count > 1 {
            window.sent(place, correlation: try send(.pubs, [Array(chunk.stage.utf8), PublishBatch.encode(events)]))
        } else {
            window.sent(place, correlation: try send(.pub, [Array(chunk.stage.utf8)] + events))
        }
    }

    /// A reply to one of the window's PUBs: a confirm, or `busy` (sent again), or a refusal (fatal).
    private func answered(_ place: PublishWindow.Place, _ frames: [[UInt8]]) throws {
        if frames[1] == Verb.ok.bytes {
            window.confirm(place)
            return
        }
        let chunk = window.chunk(place)
        let code = frames.count > 3 ? String(decoding: frames[3], as: UTF8.self) : ""
        guard code == ErrorCode.busy.wire else {
            throw PluginError("the broker refused output of \(configuration.name) to \(chunk.stage): \(Self.describe(frames))")
        }
        if stopped && chunk.attempts > 50 { throw PluginError("stopping with unconfirmed output") }
        if chunk.attempts > 1 { Thread.sleep(forTimeInterval: min(1.0, 0.01 * Double(chunk.attempts))) }
        try sendChunk(place)
    }

    /// ACKs the batches whose output is all confirmed, oldest first.
    private func settle() throws {
        let settled = window.removeSettled()
        guard let last = settled.last else { return }
        try send(.ack, [Array(configuration.name.utf8), Array(String(last.lastSeq).utf8)])
        for batch in settled {
            metrics.batch(count: batch.inputs, forwarded: batch.forwarded, diagnostics: batch.diagnostics,
                          seq: batch.lastSeq, nanoseconds: Self.nanoseconds(since: batch.started))
        }
    }

    /// Waits a little for confirms, settles what they complete, and reconnects if none came in time.
    private func awaitConfirms() throws {
        try receive(timeoutMilliseconds: 10)
        try settle()
        try checkConfirmTimeout()
    }

    /// Waits until every published output is confirmed and ACKed; when stopping, gives up
    /// after a few confirm timeouts (a crash-like stop: the next start replays from the last commit).
    private func drainWindow() throws {
        let deadline = ContinuousClock.now + .milliseconds(3 * configuration.confirmTimeoutMilliseconds)
        while !window.isEmpty {
            if stopped && ContinuousClock.now > deadline { throw PluginError("stopping with unconfirmed output") }
            try awaitConfirms()
        }
    }

    /// No confirm within the timeout: the broker restarted or the link broke. Reconnect, and send
    /// every unconfirmed chunk again, in order (the broker drops repeats by id).
    private func checkConfirmTimeout() throws {
        guard let oldest = window.oldestSend,
              ContinuousClock.now - oldest >= .milliseconds(configuration.confirmTimeoutMilliseconds) else { return }
        logger.warning("no confirm in time; reconnecting", metadata: ["bus.plugin": "\(configuration.name)"])
        try connect()
        for place in window.unconfirmedForResend() { try sendChunk(place) }
    }

    /// The features a HELLO reply lists (`forward`, `pubs`, …); none for anything else.
    static func features(_ reply: [[UInt8]]) -> Set<String> {
        guard reply.count >= 4, reply[1] == Verb.ok.bytes else { return [] }
        return WireProtocol.helloFeatures(reply[3])
    }

    static func describe(_ frames: [[UInt8]]) -> String {
        frames.dropFirst().map { String(decoding: $0.prefix(200), as: UTF8.self) }.joined(separator: " ")
    }
}
