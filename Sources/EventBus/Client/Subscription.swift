import Dispatch
import Foundation
import Logging
import Synchronization
import ZeroMQ

/// A live subscription to the broker's stream socket (a SUB socket on its own thread).
///
/// Yields the events of the stages `out` and `diag` whose topic starts with one of
/// the prefixes, as they are published, from the moment the subscription reaches the
/// broker. Best effort: nothing is replayed, and under overload events are lost —
/// by the broker's high-water mark, or here when the application does not keep up:
/// the buffer holds `bufferSize` deliveries and drops the **newest** when full
/// (like a ZeroMQ high-water mark). Gaps are visible through ``Delivery/seq``;
/// use a ``DurableConsumer`` to miss nothing.
///
/// The sequence ends after ``cancel()`` (or when the subscription is released).
public final class Subscription: AsyncSequence, Sendable {
    /// The elements: one event each.
    public typealias Element = Delivery

    private let stream: AsyncStream<Delivery>
    private let control: Control

    /// What the caller's side and the thread share; the thread holds this, not the
    /// subscription, so that releasing the subscription stops the thread.
    private final class Control: Sendable {
        let wake: EventFD
        let stopping = Atomic<Bool>(false)
        let finished = DispatchSemaphore(value: 0)

        init() throws { wake = try EventFD() }

        func stop(wait: Bool) {
            guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
            wake.signal()
            if wait { finished.wait() }
        }
    }

    /// Connects to the stream socket and subscribes to `prefixes`.
    ///
    /// - Parameters:
    ///   - endpoint: The broker's stream endpoint (its XPUB).
    ///   - prefixes: Topic prefixes such as `out/`; end them with `/`. Empty subscribes to nothing.
    ///   - bufferSize: The most deliveries kept for the application; newer ones are dropped.
    ///   - logger: Where dropped and malformed messages are logged.
    ///   - curve: CURVE keys for a broker with keys configured; the broker then
    ///     applies only the prefixes this client's role may see.
    /// - Throws: A `ZMQError` for an endpoint libzmq rejects.
    public init(
        endpoint: String = WireProtocol.defaultStreamEndpoint, prefixes: [String], bufferSize: Int = 10_000,
        logger: Logger = Logger(label: "eventbus.subscription"), curve: CurveClientKeys? = nil
    ) throws {
        let (stream, continuation) = AsyncStream.makeStream(of: Delivery.self, bufferingPolicy: .bufferingOldest(Swift.max(bufferSize, 1)))
        self.stream = stream
        let control = try Control()
        self.control = control
        let context = try Context()
        let socket = try Socket(context: context, type: .sub)
        try socket.setLinger(0)
        try socket.setReconnectInterval(100)
        try curve?.apply(to: socket)
        for prefix in prefixes { try socket.subscribe(Array(prefix.utf8)) }
        try socket.connect(endpoint)
        let thread = Thread {
            Self.run(socket: socket, control: control, continuation: continuation, logger: logger)
            socket.close()
            _ = context
            continuation.finish()
            control.finished.signal()
        }
        thread.name = "eventbus.subscription"
        thread.start()
        continuation.onTermination = { (_: AsyncStream<Delivery>.Continuation.Termination) in control.stop(wait: false) }
    }

    deinit { control.stop(wait: false) }

    /// Stops the subscription; the sequence ends. Safe to call more than once.
    public func cancel() {
        control.stop(wait: true)
    }

    private static func run(
        socket: Socket, control: Control,
        continuation: AsyncStream<Delivery>.Continuation, logger: Logger
    ) {
        var poller = Poller()
        poller.add(socket)
        poller.add(fileDescriptor: control.wake.fileDescriptor)
        var dropped = 0
        while !control.stopping.load(ordering: .acquiring) {
            let ready: [Poller.Events]
            do {
                ready = try poller.poll(timeoutMilliseconds: 1_000)
            } catch {
                logger.error("poll failed; the subscription ends", metadata: ["error.type": "\(error)"])
                return
            }
            if ready[1].contains(.readable) { control.wake.drain() }
            guard ready[0].contains(.readable) else { continue }
            for _ in 0..<1_000 {
                guard let frames = try? socket.receive(dontWait: true) else { break }
                guard frames.count == 3, let seq = ClientFrames.bigEndianUInt64(frames[1]) else {
                    logger.warning("malformed stream message dropped", metadata: ["bus.frames": "\(frames.count)"])
                    continue
                }
                let delivery = Delivery(seq: seq, topic: String(decoding: frames[0], as: UTF8.self), event: frames[2])
                switch continuation.yield(delivery) {
                case .dropped:
                    dropped += 1
                    if dropped == 1 || dropped % 1_000 == 0 {
                        logger.warning("subscriber too slow: deliveries dropped", metadata: ["bus.dropped": "\(dropped)", "bus.seq": "\(seq)"])
                    }
                case .terminated:
                    return
                default:
                    break
                }
            }
        }
    }

    /// Creates the iterator.
    public func makeAsyncIterator() -> AsyncStream<Delivery>.AsyncIterator {
        stream.makeAsyncIterator()
    }
}
