import EventBus

/// One websocket frame ready to send: its SEQ and its text, encoded once for every connection.
public struct OutboundFrame: Sendable, Equatable {
    /// The event's SEQ.
    public let seq: UInt64
    /// The frame's JSON text.
    public let text: String

    /// Encodes `delivery`.
    public init(_ delivery: Delivery) {
        seq = delivery.seq
        text = GatewayFrame.text(for: delivery)
    }
}

/// The text of one websocket frame: `{"seq": N, "topic": "...", "event": {CloudEvent}}`.
public enum GatewayFrame {
    /// Encodes a delivery as a frame; the event's bytes are embedded as they came from the bus.
    ///
    /// - Parameter delivery: The `out` event.
    /// - Returns: The frame's JSON text.
    public static func text(for delivery: Delivery) -> String {
        var writer = JSONWriter(capacity: delivery.event.count + delivery.topic.utf8.count + 48)
        writer.beginObject()
        writer.key("seq")
        writer.uint(delivery.seq)
        writer.key("topic")
        writer.string(delivery.topic)
        writer.key("event")
        writer.raw(delivery.event)
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
