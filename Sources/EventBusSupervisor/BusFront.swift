import EventBusBroker

/// What the supervisor's plugins connect to: the embedded broker (``EmbeddedBroker``),
/// or another front that speaks EB1 on a command endpoint — the JetStream gateway of
/// `eventbus up --backend nats://…` (docs/scale-out.md).
///
/// The supervisor runs it first and stops it last: ``run()`` blocks on a thread of
/// its own until ``stop()``.
public protocol BusFront: Sendable {
    /// The command endpoint as bound, which the plugins are given.
    var commandEndpoint: String { get }
    /// The stream endpoint as bound, if the front has one.
    var streamEndpoint: String? { get }
    /// The name of the thread ``run()`` blocks on (for debuggers and `top -H`).
    var threadName: String { get }
    /// Serves until ``stop()``; throws when it cannot go on.
    func run() throws
    /// Asks ``run()`` to return; safe from any thread.
    func stop()
}

/// The embedded broker as a ``BusFront``.
public struct EmbeddedBroker: BusFront {
    public let broker: Broker

    public init(_ broker: Broker) {
        self.broker = broker
    }

    public var commandEndpoint: String { broker.commandEndpoint }
    public var streamEndpoint: String? { broker.streamEndpoint }
    public var threadName: String { "eventbus.broker" }
    public func run() throws { try broker.run() }
    public func stop() { broker.stop() }
}
