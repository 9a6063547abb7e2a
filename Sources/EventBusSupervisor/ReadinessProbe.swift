import EventBus
import Logging
import ZeroMQ

/// The supervisor's readiness probe: `STATS` on a DEALER of its own, every
/// ``interval``, through the client's state machine (``ClientState``, which numbers
/// the request, builds its frames with ``ClientFrames``, parses the reply and times it
/// out) until ``Supervisor`` sees every stage's consumer connected.
///
/// Owned by the supervisor's thread, which polls ``socket`` with ``pollTimeout(now:)``.
final class ReadinessProbe {
    /// The probe asks no more often than this.
    static let interval = Duration.milliseconds(100)
    /// How long a STATS may wait for its answer before the next is sent.
    static let timeout = Duration.milliseconds(500)

    let socket: Socket
    /// The socket's context, alive as long as the probe.
    private let context: Context
    private let logger: Logger
    private var state: ClientState<Void, Never>
    private var waiting = false
    private var nextProbe = ContinuousClock.now
    /// The JSON of the last STATS answered, until ``step(readable:now:)`` hands it over.
    private var answer: [UInt8]?

    /// Connects to `endpoint`, with `keys` when the broker has keys configured.
    init(context: Context, endpoint: String, keys: CurveClientKeys?, logger: Logger) throws {
        let socket = try Socket(context: context, type: .dealer)
        do {
            try socket.setLinger(0)
            try keys?.apply(to: socket)
            try socket.connect(endpoint)
        } catch {
            socket.close()
            throw error
        }
        self.socket = socket
        self.context = context
        self.logger = logger
        state = ClientState(endpoint: endpoint, requestTimeout: Self.timeout, resendAfter: Self.timeout)
    }

    func close() { socket.close() }

    /// Milliseconds to poll before ``step(readable:now:)`` has something to do.
    func pollTimeout(now: ContinuousClock.Instant) -> Int {
        let due = waiting ? (state.nextDeadline ?? now) : nextProbe
        let left = now.duration(to: due)
        guard left > .zero else { return 0 }
        return Int(left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000) + 1
    }

    /// Reads the replies that came (when the socket is `readable`), times out a STATS
    /// left unanswered, sends the next when it is time; returns the JSON of a STATS
    /// answered since the last step, if one was.
    func step(readable: Bool, now: ContinuousClock.Instant) -> [UInt8]? {
        if readable {
            while let frames = try? socket.receive(dontWait: true) { perform(state.received(frames), now: now) }
        }
        perform(state.tick(now: now), now: now)
        if !waiting && now >= nextProbe {
            waiting = true
            perform(state.request(.stats, [], waiter: (), now: now), now: now)
        }
        defer { answer = nil }
        return answer
    }

    private func perform(_ actions: [ClientState<Void, Never>.Action], now: ContinuousClock.Instant) {
        for action in actions {
            switch action {
            case .send(_, let frames):
                // Not queued (no connection yet): the request times out and the next is sent.
                _ = try? socket.send(frames, dontWait: true)
            case .complete(_, let result):
                waiting = false
                nextProbe = now + Self.interval
                switch result {
                case .success(let body): answer = body.first ?? []
                case .failure(let error): logger.trace("readiness probe: STATS failed", metadata: ["error.type": "\(error)"])
                }
            case .log(let level, let message):
                logger.log(level: level == .debug ? .trace : level, "readiness probe: \(message)")
            case .deliver, .finish:
                break  // no consumer on this connection
            }
        }
    }
}
