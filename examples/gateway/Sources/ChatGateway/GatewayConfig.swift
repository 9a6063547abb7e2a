/// How the gateway consumes the bus and bounds its memory.
public struct GatewayConfig: Sendable {
    /// The durable consumer's name; its offset persists in the broker.
    public var consumer: String
    /// The most frames that may wait for one websocket before it is closed with ``Connection/overflowCloseCode``.
    public var queueCapacity: Int
    /// The broker's credit for the durable consumer.
    public var credit: Int
    /// How many replays may read the log at once.
    public var replayConcurrency: Int

    /// Creates a configuration.
    public init(consumer: String = "chat-gateway", queueCapacity: Int = 1024, credit: Int = 1000, replayConcurrency: Int = 8) {
        self.consumer = consumer
        self.queueCapacity = queueCapacity
        self.credit = credit
        self.replayConcurrency = replayConcurrency
    }
}
