import EventBus
import Synchronization

/// What the streams of one server are doing, for `GET /v1/stream/stats`: how many are open,
/// how many events wait in their buffers (bounded by ``StreamSettings/bufferEvents`` each),
/// how many were delivered, and how many clients were cut for falling behind.
public final class StreamCounters: Sendable {
    /// The counters at one moment.
    public struct Snapshot: Sendable, Equatable {
        /// Streams open now.
        public var open = 0
        /// Streams opened since the server started.
        public var opened = 0
        /// Clients cut for falling behind their buffer.
        public var cut = 0
        /// Events written to clients.
        public var delivered = 0
        /// Messages waiting in the buffers of the open streams now.
        public var buffered = 0
        /// The most messages one stream's buffer has held.
        public var peakBuffered = 0
    }

    private let state = Mutex(Snapshot())
    /// The bound of each buffer.
    public let bufferCapacity: Int

    public init(bufferCapacity: Int) {
        self.bufferCapacity = bufferCapacity
    }

    /// The counters now.
    public var snapshot: Snapshot { state.withLock { $0 } }

    func opened() { state.withLock { $0.open += 1; $0.opened += 1 } }
    func closed(leftBuffered: Int) { state.withLock { $0.open -= 1; $0.buffered -= leftBuffered } }
    func cut() { state.withLock { $0.cut += 1 } }
    func queued(streamBuffered: Int) { state.withLock { $0.buffered += 1; $0.peakBuffered = max($0.peakBuffered, streamBuffered) } }
    func dequeued() { state.withLock { $0.buffered -= 1 } }
    func delivered() { state.withLock { $0.delivered += 1 } }

    /// The counters as the JSON object `GET /v1/stream/stats` answers.
    public var json: [UInt8] {
        let now = snapshot
        var writer = JSONWriter()
        writer.beginObject()
        for (key, value) in [("open", now.open), ("opened", now.opened), ("cut", now.cut), ("delivered", now.delivered),
                             ("buffered", now.buffered), ("peak_buffered", now.peakBuffered), ("buffer_capacity", bufferCapacity)] {
            writer.key(key)
            writer.int(value)
        }
        writer.endObject()
        return writer.bytes
    }
}
