import Logging
import Synchronization

/// A stateless EB1 front on a JetStream cluster (`eventbus gateway`, docs/scale-out.md).
///
/// It binds a ROUTER command socket as the broker does and serves PUB, PUBS, CONSUME,
/// ACK, CANCEL, HELLO, PING and STATS from one thread; the events, their dedup window and
/// the consumers' positions all live in JetStream, so a gateway that dies loses nothing
/// it confirmed and another can take its clients.
///
/// ```swift
/// let gateway = try Gateway(config: GatewayConfig(servers: ["nats://127.0.0.1:4222"]), logger: logger)
/// Thread { gateway.run() }.start()
/// // …
/// gateway.stop()
/// ```
public final class Gateway: Sendable {
    // Made here, then used only by the thread inside `run`; `running` keeps it to one.
    nonisolated(unsafe) let core: GatewayCore
    private let stopRequested = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)

    /// The command endpoint as bound (`tcp://127.0.0.1:*` shows the chosen port).
    public let commandEndpoint: String

    /// Connects to the cluster, makes each stage's stream when it is missing, and binds.
    ///
    /// - Throws: ``GatewayError/unreachable(servers:_:)`` when no server answers,
    ///   ``GatewayError/streamUnavailable(stream:servers:_:)`` when JetStream cannot make
    ///   or show a stream (no quorum), ``GatewayError/cannotBind(endpoint:_:)``.
    public init(config: GatewayConfig, logger: Logger) throws(GatewayError) {
        core = try GatewayCore(config: config, logger: logger)
        commandEndpoint = core.commandEndpoint
    }

    /// Serves on the calling thread until ``stop()``; then answers the PUBs in flight (or
    /// lets their deadline pass), gives the consumers' unacked events back to JetStream and
    /// closes.
    public func run() {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return
        }
        core.run { stopRequested.load(ordering: .acquiring) }
    }

    /// Asks ``run()`` to return; safe from any thread.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        core.inbox.wakeup.signal()
    }
}
