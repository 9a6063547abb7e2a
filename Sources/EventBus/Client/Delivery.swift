/// One event delivered to a ``DurableConsumer`` or a ``Subscription``.
public struct Delivery: Sendable, Equatable {
    /// The event's position in the log.
    public let seq: UInt64
    /// The topic, `STAGE/SUBJECT/TYPE`.
    public let topic: String
    /// The CloudEvents JSON, exactly as the broker sent it.
    public let event: [UInt8]

    /// Creates a delivery.
    public init(seq: UInt64, topic: String, event: [UInt8]) {
        self.seq = seq
        self.topic = topic
        self.event = event
    }
}
