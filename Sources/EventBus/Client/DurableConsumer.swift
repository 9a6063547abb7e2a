/// A durable consumer: the events of the log that match its prefixes, in SEQ order.
///
/// Made by ``BusClient/consume(name:start:credit:prefixes:)``. Iterate it for
/// ``Delivery``s and ``ack(_:)`` each one (or the last of several: ACKs are
/// cumulative) when it is done; the broker sends at most `credit` events beyond the
/// last ACK. Delivery is at-least-once across broker restarts, but after a reconnect
/// the client drops events at or below the highest SEQ it already yielded, so the
/// sequence itself never goes back.
///
/// The sequence ends normally after ``cancel()``, ``BusClient/close()``, or when the
/// broker sends `END` because another peer took the consumer over: then
/// ``endReason`` holds the broker's reason. It ends with a thrown ``BusError`` when
/// resuming after a reconnect fails.
public final class DurableConsumer: AsyncSequence, Sendable {
    /// The elements: one event each.
    public typealias Element = Delivery

    /// The consumer name.
    public let name: String
    /// The SEQ the first delivered event will have at the earliest (the `OK` of `CONSUME`).
    public let firstSeq: UInt64
    private let stream: AsyncThrowingStream<Delivery, any Error>
    private let sink: ConsumerSink
    private let client: BusClient

    init(name: String, firstSeq: UInt64, stream: AsyncThrowingStream<Delivery, any Error>, sink: ConsumerSink, client: BusClient) {
        self.name = name
        self.firstSeq = firstSeq
        self.stream = stream
        self.sink = sink
        self.client = client
    }

    /// The broker's `END` reason once another peer took this consumer over; `nil` otherwise.
    public var endReason: String? { sink.endReason }

    /// Marks every event up to `seq` done (`ACK`); the broker persists the offset.
    ///
    /// Returns at once; an error for it is logged, not thrown.
    public func ack(_ seq: UInt64) {
        client.ack(consumer: name, seq: seq)
    }

    /// Stops delivery (`CANCEL`); the broker keeps the offset. The sequence ends.
    public func cancel() async throws(BusError) {
        try await client.cancel(consumer: name)
    }

    /// Creates the iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator())
    }

    /// Iterates the deliveries.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Delivery, any Error>.AsyncIterator

        /// The next delivery, `nil` at the end; throws a ``BusError`` when resuming failed.
        public mutating func next() async throws -> Delivery? {
            try await base.next()
        }
    }
}
