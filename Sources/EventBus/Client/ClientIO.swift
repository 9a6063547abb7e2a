import Dispatch
import Foundation
import Logging
import Synchronization
import ZeroMQ

/// The thread that owns a ``BusClient``'s DEALER socket.
///
/// Callers hand it ``Command``s through a mutex-protected inbox and wake it with an
/// `eventfd`; it polls the eventfd beside the DEALER and the DEALER's monitor, runs
/// ``ClientState``, and carries out its actions. Only this thread touches the sockets.
final class ClientIO: Sendable {
    typealias Reply = Result<[[UInt8]], BusError>
    typealias Waiter = CheckedContinuation<Reply, Never>
    typealias State = ClientState<Waiter, ConsumerSink>

    /// Work handed to the I/O thread.
    enum Command: Sendable {
        case request(Verb, [[UInt8]], Waiter)
        case consume(name: String, start: ConsumeStart, credit: Int, prefixes: [String], Waiter, ConsumerSink)
        case ack(name: String, seq: UInt64)
        case cancel(name: String, Waiter)
    }

    private struct Inbox {
        var commands: [Command] = []
        var closing = false
    }

    let endpoint: String
    private let inbox = Mutex(Inbox())
    private let wake: EventFD
    private let finished = DispatchSemaphore(value: 0)
    private let logger: Logger

    /// Creates the sockets, connects, and starts the thread.
    init(options: BusClientOptions, logger: Logger) throws {
        self.endpoint = options.endpoint
        self.logger = logger
        self.wake = try EventFD()
        let context = try Context()
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.setLinger(1_000)
        try dealer.setReconnectInterval(100)
        // Messages wait in ClientState, not in a pipe to a connection that is gone: a loss
        // drops nothing the state does not resend, in order, when the connection is back.
        try dealer.setImmediate(true)
        try options.curve?.apply(to: dealer)
        let monitor = try dealer.monitor(events: [.connected, .disconnected])
        do {
            try dealer.connect(options.endpoint)
        } catch {
            dealer.stopMonitor()
            monitor.close()
            throw error
        }
        let (endpoint, timeout, resend, ordered) = (options.endpoint, options.requestTimeout, options.resendAfter, options.ordered)
        let thread = Thread { [self] in
            let state = State(endpoint: endpoint, requestTimeout: timeout, resendAfter: resend, ordered: ordered)
            self.run(dealer: dealer, monitor: monitor, state: state)
            dealer.stopMonitor()
            monitor.close()
            dealer.close()
            _ = context  // terminated when released here, after the linger period
            self.finished.signal()
        }
        thread.name = "eventbus.client"
        thread.start()
    }

    /// Hands `command` to the I/O thread; `false` when the client is closing.
    func submit(_ command: Command) -> Bool {
        let accepted = inbox.withLock { inbox in
            guard !inbox.closing else { return false }
            inbox.commands.append(command)
            return true
        }
        if accepted { wake.signal() }
        return accepted
    }

    /// Stops the thread after the commands already submitted, and waits for it
    /// (at most the linger period, so that ACKs already handed over reach the broker).
    func close() {
        let first = inbox.withLock { inbox in
            defer { inbox.closing = true }
            return !inbox.closing
        }
        guard first else { return }
        wake.signal()
        finished.wait()
    }

    // MARK: The thread

    private func run(dealer: Socket, monitor: Socket, state initial: State) {
        var state = initial
        var poller = Poller()
        poller.add(dealer)
        poller.add(monitor)
        poller.add(fileDescriptor: wake.fileDescriptor)
        let clock = ContinuousClock()
        while true {
            var timeout = 1_000
            if let due = state.nextDeadline {
                let wait = clock.now.duration(to: due)
                timeout = max(0, min(timeout, Int(wait.components.seconds * 1_000 + wait.components.attoseconds / 1_000_000_000_000_000) + 1))
            }
            let ready: [Poller.Events]
            do {
                ready = try poller.poll(timeoutMilliseconds: timeout)
            } catch {
                logger.error("poll failed; the client stops", metadata: ["error.type": "\(error)"])
                perform(state.shutdown(reason: BusError(.busy, "the client's I/O failed: \(error)")), on: dealer, state: &state)
                return
            }
            if ready[2].contains(.readable) {
                wake.drain()
                let (commands, closing) = inbox.withLock { inbox in
                    defer { inbox.commands = [] }
                    return (inbox.commands, inbox.closing)
                }
                for command in commands {
                    perform(handle(command, state: &state, now: clock.now), on: dealer, state: &state)
                }
                if closing {
                    perform(state.shutdown(reason: BusError(.busy, "the client was closed")), on: dealer, state: &state)
                    return
                }
            }
            if ready[1].contains(.readable) {
                while let event = try? monitor.receiveEvent(dontWait: true) {
                    switch event {
                    case .connected: perform(state.connected(now: clock.now), on: dealer, state: &state)
                    case .disconnected: perform(state.disconnected(), on: dealer, state: &state)
                    default: break
                    }
                }
            }
            if ready[0].contains(.readable) {
                // Bounded, so that commands and timers are not starved by a flood of EVTs.
                for _ in 0..<1_000 {
                    var reader = InboundReader()
                    var deliveries: [Delivery] = []
                    do {
                        let received = try dealer.receive(dontWait: true) { _, bytes in
                            reader.take(bytes) { seq, topic, event in
                                deliveries.append(Delivery(seq: seq, topic: String(decoding: topic, as: UTF8.self), event: Array(event)))
                            }
                        }
                        guard received != nil else { break }
                    } catch {
                        logger.warning("receive failed", metadata: ["error.type": "\(error)"])
                        break
                    }
                    var message = reader.message()
                    if case .events(let name, _) = message { message = .events(name: name, deliveries: deliveries) }
                    perform(state.received(message), on: dealer, state: &state)
                }
            }
            perform(state.tick(now: clock.now), on: dealer, state: &state)
        }
    }

    private func handle(_ command: Command, state: inout State, now: ContinuousClock.Instant) -> [State.Action] {
        switch command {
        case .request(let verb, let arguments, let waiter):
            state.request(verb, arguments, waiter: waiter, now: now)
        case .consume(let name, let start, let credit, let prefixes, let waiter, let sink):
            state.consume(name: name, start: start, credit: credit, prefixes: prefixes, waiter: waiter, sink: sink, now: now)
        case .ack(let name, let seq):
            state.ack(name: name, seq: seq)
        case .cancel(let name, let waiter):
            state.cancel(name: name, waiter: waiter, now: now)
        }
    }

    private func perform(_ actions: [State.Action], on dealer: Socket, state: inout State) {
        // After one refused request, the later ones of the batch are not tried: the socket
        // could take them as its connection comes up, ahead of the refused one.
        var refused = false
        for action in actions {
            switch action {
            case .send(let request, let frames):
                let queued: Bool
                if refused && request != nil {
                    queued = false
                } else {
                    do {
                        queued = try dealer.send(frames, dontWait: true)
                    } catch {
                        logger.warning("send failed", metadata: ["error.type": "\(error)"])
                        queued = false
                    }
                }
                if !queued, let request {
                    refused = true
                    state.sendFailed(request: request, now: ContinuousClock.now)
                }
            case .complete(let waiter, let result):
                waiter.resume(returning: result)
            case .deliver(let sink, let delivery):
                sink.deliver(delivery)
            case .finish(let sink, let error, let endReason):
                sink.finish(error: error, endReason: endReason)
            case .log(let level, let message):
                logger.log(level: level, message, metadata: ["bus.endpoint": "\(endpoint)"])
            }
        }
    }
}
