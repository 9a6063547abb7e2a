import DequeModule
import EventBus
import Logging
import ZeroMQ

/// One ``PluginRunner/run()``: the socket, the plugin's state and the protocol
/// bookkeeping, owned by the thread that runs it and by nothing else (it is not
/// `Sendable`, and never leaves ``PluginRunner/run()``).
///
/// The loop polls its one DEALER with a timeout no later than the next deadline of
/// ``RunnerState`` (a connection to give up, a `busy` PUB to send again, an idle PING),
/// so that waiting is always a poll that a reply ends, never a sleep.
final class RunnerLoop<P: Plugin> {
    private let runner: PluginRunner<P>
    private let plugin: P
    private let configuration: PluginConfiguration
    // The state each event touches is `@exclusivity(unchecked)`: only the loop's thread reaches
    // it, and no method lends one of these properties while another reaches it. The dynamic
    // check a class's property gets otherwise (a begin and an end of access, each looking up
    // the thread's access set) costs about 130 instructions per access.
    @exclusivity(unchecked) private var state: RunnerState
    @exclusivity(unchecked) private var pluginState: P.State
    private var socket: Socket?
    private var poller = Poller()
    /// Events received and not yet handled, in SEQ order.
    @exclusivity(unchecked) private var pending: Deque<PluginEvent> = []
    @exclusivity(unchecked) private var output: PluginOutput
    @exclusivity(unchecked) private var committedSeq: UInt64 = 0
    @exclusivity(unchecked) private var eventsSinceSnapshot = 0
    @exclusivity(unchecked) private var lastSnapshot = ContinuousClock.now

    init(runner: PluginRunner<P>) {
        self.runner = runner
        plugin = runner.plugin
        configuration = runner.configuration
        pluginState = runner.plugin.initialState()
        output = PluginOutput(plugin: runner.configuration.name)
        state = RunnerState(configuration: runner.configuration, services: runner.plugin.services,
                            persistent: P.State.isPersistent, appliedSeq: 0, now: .now)
    }

    func run() throws {
        try restore()
        defer {
            socket?.close()
            socket = nil
        }
        try reconnect()
        while !runner.stopped {
            if snapshotDue { try drainWindow() }
            try commitIfDue(force: false)
            // Timers before the next batch is taken, so that no batch is in hand when they reconnect.
            try perform(state.tick(now: .now))
            let batch = try nextBatch(waitMilliseconds: state.window.isEmpty ? 100 : 1)
            try perform(state.settle())
            if batch.isEmpty { continue }
            let started = ContinuousClock.now
            output.removeAll()
            var applied = state.appliedSeq
            for event in batch {
                output.begin(event.seq)
                try plugin.handle(event, state: &pluginState, output: &output)
                applied = event.seq
            }
            eventsSinceSnapshot += batch.count
            try perform(state.publish(
                lastSeq: applied, inputs: batch.count, started: started,
                outputs: [(configuration.outputStage, output.outgoing),
                          (Stage.diag, output.diagnostics.map { OutgoingEvent(bytes: $0) })],
                now: .now))
            runner.applied(applied)
            try perform(state.settle())
            while !runner.stopped && !state.hasRoom(batchSize: configuration.batchSize) { try awaitConfirms() }
        }
        try drainWindow()
        try commitIfDue(force: true)
        runner.logger.info("plugin stopped", metadata: ["bus.plugin": "\(configuration.name)", "bus.seq": "\(state.appliedSeq)"])
    }

    // MARK: State

    private func restore() throws {
        guard let store = runner.store, let stored = try store.load() else { return }
        pluginState = try P.State(snapshot: stored.snapshot)
        state = RunnerState(configuration: configuration, services: plugin.services,
                            persistent: P.State.isPersistent, appliedSeq: stored.seq, now: .now)
        committedSeq = stored.seq
        runner.applied(stored.seq)
        runner.logger.info("plugin state restored", metadata: ["bus.plugin": "\(configuration.name)", "bus.seq": "\(stored.seq)"])
    }

    /// Whether the state should be committed: many events or a long time since the last commit.
    private var snapshotDue: Bool {
        runner.store != nil && state.appliedSeq > committedSeq
            && (eventsSinceSnapshot >= configuration.snapshotEveryEvents
                || ContinuousClock.now - lastSnapshot >= .seconds(configuration.snapshotIntervalSeconds))
    }

    /// Commits the state with the applied SEQ when due (or `force`), and only
    /// when every output up to that SEQ is confirmed.
    private func commitIfDue(force: Bool) throws {
        guard let store = runner.store, state.appliedSeq > committedSeq, state.window.isEmpty else { return }
        guard force || snapshotDue else { return }
        let started = ContinuousClock.now
        try store.save(snapshot: pluginState.snapshot(), seq: state.appliedSeq)
        runner.metrics.snapshotted(nanoseconds: Self.nanoseconds(since: started))
        committedSeq = state.appliedSeq
        eventsSinceSnapshot = 0
        lastSnapshot = .now
    }

    private static func nanoseconds(since start: ContinuousClock.Instant) -> UInt64 {
        let elapsed = (ContinuousClock.now - start).components
        return UInt64(max(0, elapsed.seconds)) * 1_000_000_000 + UInt64(max(0, elapsed.attoseconds) / 1_000_000_000)
    }

    // MARK: Connection

    /// Opens a new connection (closing the last) and attaches the consumer after the last applied SEQ.
    private func reconnect() throws {
        socket?.close()
        socket = nil
        pending.removeAll()
        let socket = try Socket(context: runner.context, type: .dealer)
        try socket.setLinger(0)
        try socket.setReceiveHighWaterMark(0)
        try socket.setSendHighWaterMark(0)
        try socket.setReconnectInterval(100)
        try configuration.curve?.apply(to: socket)
        try socket.connect(configuration.commandEndpoint)
        self.socket = socket
        poller = Poller()
        poller.add(socket)
        try perform(state.connecting(now: .now))
    }

    /// Carries out what ``RunnerState`` asks.
    private func perform(_ actions: [RunnerState.Action]) throws {
        for action in actions {
            switch action {
            case .send(let frames):
                guard let socket else { throw PluginError("not connected") }
                try socket.send(frames)
            case .reconnect:
                try reconnect()
            case .settled(let batches):
                for batch in batches {
                    runner.metrics.batch(count: batch.inputs, forwarded: batch.forwarded, diagnostics: batch.diagnostics,
                                         seq: batch.lastSeq, nanoseconds: Self.nanoseconds(since: batch.started))
                }
            case .log(let level, let message, var metadata):
                metadata["bus.plugin"] = "\(configuration.name)"
                runner.logger.log(level: level, message, metadata: metadata)
            }
        }
    }

    // MARK: Wire

    /// Takes the next batch: what is pending plus what the socket has, waiting up to
    /// `waitMilliseconds` (or the state's next deadline) for a first event.
    private func nextBatch(waitMilliseconds: Int) throws -> [PluginEvent] {
        if pending.isEmpty { try receive(timeoutMilliseconds: pollTimeout(waitMilliseconds)) }
        while pending.count < configuration.batchSize, try receive(timeoutMilliseconds: 0) {}
        var batch: [PluginEvent] = []
        batch.reserveCapacity(min(pending.count, configuration.batchSize))
        let applied = state.appliedSeq
        while batch.count < configuration.batchSize, let event = pending.popFirst() {
            if event.seq > applied { batch.append(event) }
        }
        return batch
    }

    /// `milliseconds`, or less when the state has something to do sooner.
    private func pollTimeout(_ milliseconds: Int) -> Int {
        guard let due = state.nextDeadline else { return milliseconds }
        let left = ContinuousClock.now.duration(to: due)
        guard left > .zero else { return 0 }
        return min(milliseconds, Int(left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000) + 1)
    }

    /// Receives one message if one comes within the timeout (none: only what is queued).
    /// Events go to `pending` as they are decoded, where libzmq holds them; everything else
    /// goes to the state. Returns whether a message came.
    @discardableResult
    private func receive(timeoutMilliseconds: Int) throws -> Bool {
        guard let socket else { throw PluginError("not connected") }
        if timeoutMilliseconds > 0 {
            guard try poller.poll(timeoutMilliseconds: timeoutMilliseconds)[0].contains(.readable) else { return false }
        }
        var reader = InboundReader()
        // Appended to a local deque, so that the events of a batch cost no access check on this object.
        var events = Deque<PluginEvent>()
        swap(&events, &pending)
        let received: Int?
        do {
            received = try socket.receive(dontWait: true) { _, bytes in
                reader.take(bytes) { seq, topic, event in
                    events.append(PluginEvent(seq: seq, topic: String(decoding: topic, as: UTF8.self), bytes: Array(event)))
                }
            }
        } catch {
            swap(&events, &pending)
            throw error
        }
        swap(&events, &pending)
        guard received != nil else { return false }
        let now = ContinuousClock.now
        switch reader.message() {
        case .event(_, let delivery):
            pending.append(PluginEvent(seq: delivery.seq, topic: delivery.topic, bytes: delivery.event))
            state.heard(now: now)
        case .events:
            state.heard(now: now)
        case let message:
            try perform(state.received(message, now: now))
        }
        return true
    }

    // MARK: Output in flight

    /// Waits a little for confirms, settles what they complete, and lets the state's timers run.
    private func awaitConfirms() throws {
        try receive(timeoutMilliseconds: pollTimeout(10))
        try perform(state.settle())
        try perform(state.tick(now: .now))
    }

    /// Waits until every published output is confirmed and ACKed; when stopping, gives up
    /// after a few confirm timeouts (a crash-like stop: the next start replays from the last commit).
    private func drainWindow() throws {
        let deadline = ContinuousClock.now + .milliseconds(3 * configuration.confirmTimeoutMilliseconds)
        while !state.window.isEmpty {
            state.stopping = runner.stopped
            if state.stopping && ContinuousClock.now > deadline { throw PluginError("stopping with unconfirmed output") }
            try awaitConfirms()
        }
    }
}
