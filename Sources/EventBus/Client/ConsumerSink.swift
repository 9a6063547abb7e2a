import Synchronization

/// Where the I/O thread puts a durable consumer's deliveries, shared with its ``DurableConsumer``.
final class ConsumerSink: Sendable {
    let continuation: AsyncThrowingStream<Delivery, any Error>.Continuation
    private let reason = Mutex<String?>(nil)

    init(continuation: AsyncThrowingStream<Delivery, any Error>.Continuation) {
        self.continuation = continuation
    }

    /// The broker's `END` reason, once the consumer was ended by it.
    var endReason: String? { reason.withLock { $0 } }

    func deliver(_ delivery: Delivery) {
        continuation.yield(delivery)
    }

    func finish(error: BusError?, endReason: String?) {
        if let endReason { reason.withLock { $0 = endReason } }
        continuation.finish(throwing: error)
    }
}
