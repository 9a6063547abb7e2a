import CNATS
import Synchronization

/// Where a new consumer starts in its stream.
public enum DeliverStart: Sendable, Equatable {
    /// At the stream's first message (the default).
    case all
    /// After the stream's last message: only messages stored from now on.
    case new
    /// At this stream sequence (or the first one above it that is stored).
    case sequence(UInt64)
}

/// The configuration of a durable pull consumer with explicit acks.
public struct PullConsumerConfig: Sendable, Equatable {
    public var stream: String
    /// The durable name: the consumer, its position and its pending acks outlive this
    /// process and are shared by every process that binds to the same name.
    public var durable: String
    /// Only messages on this subject (wildcards allowed), `nil` for all of the stream's.
    public var filterSubject: String?
    /// How long the server waits for an ack before redelivering.
    public var ackWait: Duration
    /// Deliveries of one message at most, -1 for no limit.
    public var maxDeliver: Int
    /// Where a consumer made now starts; an existing consumer keeps its position.
    public var start: DeliverStart
    /// Messages delivered and not yet acked at most, -1 for the server's default.
    public var maxAckPending: Int

    public init(stream: String, durable: String, filterSubject: String? = nil,
                ackWait: Duration = .seconds(30), maxDeliver: Int = -1, start: DeliverStart = .all,
                maxAckPending: Int = -1) {
        self.stream = stream
        self.durable = durable
        self.filterSubject = filterSubject
        self.ackWait = ackWait
        self.maxDeliver = maxDeliver
        self.start = start
        self.maxAckPending = maxAckPending
    }
}

/// A durable consumer's position as the server reports it.
public struct ConsumerInfo: Sendable, Equatable {
    public var stream: String
    public var name: String
    /// The highest stream sequence below which every message is acked (0: none yet).
    public var ackFloorStreamSequence: UInt64
    /// The highest stream sequence delivered so far (0: none yet).
    public var deliveredStreamSequence: UInt64
    /// Messages delivered and not acked.
    public var ackPending: Int
    /// Messages of the stream the consumer has not delivered yet.
    public var pending: UInt64
    /// Messages delivered more than once (their ack wait ran out, or a nak).
    public var redelivered: Int

    init(_ native: UnsafeMutablePointer<jsConsumerInfo>) {
        let info = native.pointee
        stream = string(info.Stream) ?? ""
        name = string(info.Name) ?? ""
        ackFloorStreamSequence = info.AckFloor.Stream
        deliveredStreamSequence = info.Delivered.Stream
        ackPending = Int(info.NumAckPending)
        pending = info.NumPending
        redelivered = Int(info.NumRedelivered)
    }
}

/// A durable pull consumer: batches are fetched when the caller asks, acked one by one.
///
/// The blocking ``fetch(batch:timeout:)`` runs on the calling thread; the `async` one on
/// a thread of the consumer's own. libnats allows one fetch at a time per consumer:
/// the async fetches queue on that thread, a second blocking fetch from another thread
/// fails.
public final class PullConsumer: @unchecked Sendable {
    /// Kept alive as long as the consumer.
    public let jetStream: JetStream
    public let config: PullConsumerConfig
    let handle: OpaquePointer
    private let worker: BlockingWorker

    /// Creates the durable consumer when it does not exist (the same configuration again
    /// is no error), then binds to it; with `create` false, only binds to the consumer
    /// that exists, whatever its configuration.
    ///
    /// Two steps because libnats's `js_PullSubscribe` wants a subject unless it is bound to
    /// an existing consumer, and a consumer that libnats created itself is deleted by its
    /// `natsSubscription_Unsubscribe`.
    public init(jetStream: JetStream, config: PullConsumerConfig, create: Bool = true) throws(NATSError) {
        let what = "pull consumer \(config.stream)/\(config.durable)"
        let strings = CStrings()
        var code = jsErrCode(0)
        if create { try Self.add(jetStream: jetStream, config: config, strings: strings, what: what) }
        var subOptions = jsSubOptions()
        jsSubOptions_Init(&subOptions)
        subOptions.Stream = strings.add(config.stream)
        subOptions.Consumer = strings.add(config.durable)
        var sub: OpaquePointer?
        let status = withExtendedLifetime(strings) {
            js_PullSubscribe(&sub, jetStream.handle, nil, config.durable, nil, &subOptions, &code)
        }
        try NATSError.check(status, "bind \(what)", jetStreamCode: code)
        // NATS_OK comes with the subscription.
        guard let sub else { throw NATSError(status: NATS_ERR.rawValue, operation: what, text: "no subscription") }
        self.jetStream = jetStream
        self.config = config
        self.handle = sub
        self.worker = BlockingWorker(name: "nats-fetch \(config.durable)")
    }

    /// `js_AddConsumer` with `config`.
    private static func add(jetStream: JetStream, config: PullConsumerConfig, strings: CStrings, what: String) throws(NATSError) {
        var consumer = jsConsumerConfig()
        jsConsumerConfig_Init(&consumer)
        consumer.Durable = strings.add(config.durable)
        consumer.AckPolicy = js_AckExplicit
        consumer.AckWait = config.ackWait.natsNanoseconds
        consumer.MaxDeliver = Int64(config.maxDeliver)
        consumer.FilterSubject = strings.add(config.filterSubject)
        switch config.start {
        case .all: consumer.DeliverPolicy = js_DeliverAll
        case .new: consumer.DeliverPolicy = js_DeliverNew
        case .sequence(let sequence):
            consumer.DeliverPolicy = js_DeliverByStartSequence
            consumer.OptStartSeq = sequence
        }
        if config.maxAckPending >= 0 { consumer.MaxAckPending = Int64(config.maxAckPending) }
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var code = jsErrCode(0)
        let added = withExtendedLifetime(strings) { js_AddConsumer(&info, jetStream.handle, config.stream, &consumer, nil, &code) }
        try NATSError.check(added, "add \(what)", jetStreamCode: code)
        jsConsumerInfo_Destroy(info)
    }

    deinit {
        worker.stop()
        // Bound, not created by libnats: unsubscribing leaves the durable consumer on the server.
        SubscriptionReaper.destroy(handle, of: jetStream.connection)
    }

    /// Up to `batch` messages, blocking the calling thread until they came or `timeout`
    /// passed; an empty array when nothing came.
    public func fetch(batch: Int, timeout: Duration) throws(NATSError) -> [JetStreamMessage] {
        var list = natsMsgList()
        var code = jsErrCode(0)
        let status = natsSubscription_Fetch(&list, handle, Int32(batch), timeout.natsMilliseconds, &code)
        if status == NATS_TIMEOUT { return [] }
        try NATSError.check(status, "fetch \(config.stream)/\(config.durable)", jetStreamCode: code)
        var messages: [JetStreamMessage] = []
        messages.reserveCapacity(Int(list.Count))
        for index in 0..<Int(list.Count) {
            if let message = list.Msgs[index] {
                messages.append(JetStreamMessage(consumer: self, handle: message))
                // Ours now: natsMsgList_Destroy frees the array and skips the NULLs.
                list.Msgs[index] = nil
            }
        }
        natsMsgList_Destroy(&list)
        return messages
    }

    /// ``fetch(batch:timeout:)`` on the consumer's own thread, awaited.
    public func fetch(batch: Int, timeout: Duration) async throws(NATSError) -> [JetStreamMessage] {
        let result = await worker.run { () -> Result<[JetStreamMessage], NATSError> in
            Result { () throws(NATSError) -> [JetStreamMessage] in try self.fetch(batch: batch, timeout: timeout) }
        }
        return try result.get()
    }
}

/// Where a JetStream message sits in its stream and consumer.
public struct JetStreamMetadata: Sendable, Equatable {
    public var stream: String
    public var consumer: String
    public var streamSequence: UInt64
    public var consumerSequence: UInt64
    /// 1 on the first delivery, 2 on the first redelivery, …
    public var deliveries: UInt64
    /// Messages left for the consumer after this one.
    public var pending: UInt64
    /// When the stream stored it, nanoseconds since the epoch.
    public var timestamp: Int64
}

/// A message fetched from a pull consumer, to ack or nak.
///
/// Holds its consumer alive: libnats acks through the message's subscription. Its
/// calls take a lock, so it may be handed to another task.
public final class JetStreamMessage: @unchecked Sendable {
    public let consumer: PullConsumer
    public let subject: String
    public let payload: [UInt8]
    public let headers: Headers
    private let handle: OpaquePointer
    /// libnats marks a message acked without a lock of its own.
    private let lock = Mutex(())

    init(consumer: PullConsumer, handle: OpaquePointer) {
        self.consumer = consumer
        subject = string(natsMsg_GetSubject(handle)) ?? ""
        payload = NativeMessage.payload(of: handle)
        headers = NativeMessage.headers(of: handle)
        self.handle = handle
    }

    deinit { natsMsg_Destroy(handle) }

    /// The stream and consumer sequences and the delivery count, from the reply subject.
    public func metadata() throws(NATSError) -> JetStreamMetadata {
        var meta: UnsafeMutablePointer<jsMsgMetaData>?
        let status = lock.withLock { _ in natsMsg_GetMetaData(&meta, handle) }
        try NATSError.check(status, "metadata of \(subject)")
        // NATS_OK comes with the metadata.
        guard let meta else { throw NATSError(status: NATS_ERR.rawValue, operation: "metadata", text: "none") }
        defer { jsMsgMetaData_Destroy(meta) }
        let m = meta.pointee
        return JetStreamMetadata(
            stream: string(m.Stream) ?? "", consumer: string(m.Consumer) ?? "",
            streamSequence: m.Sequence.Stream, consumerSequence: m.Sequence.Consumer,
            deliveries: m.NumDelivered, pending: m.NumPending, timestamp: m.Timestamp)
    }

    /// Acknowledges the message: the consumer will not deliver it again. Sends the ack
    /// without waiting for the server; ``ackSync()`` waits.
    public func ack() throws(NATSError) {
        let status = lock.withLock { _ in natsMsg_Ack(handle, nil) }
        try NATSError.check(status, "ack \(subject)")
    }

    /// Acknowledges and waits for the server to confirm it (up to the context's timeout).
    public func ackSync() throws(NATSError) {
        var code = jsErrCode(0)
        let status = lock.withLock { _ in natsMsg_AckSync(handle, nil, &code) }
        try NATSError.check(status, "ack \(subject)", jetStreamCode: code)
    }

    /// Refuses the message: the server redelivers it now, or after `delay`.
    public func nak(delay: Duration? = nil) throws(NATSError) {
        let status = lock.withLock { _ in
            if let delay { natsMsg_NakWithDelay(handle, delay.natsMilliseconds, nil) } else { natsMsg_Nak(handle, nil) }
        }
        try NATSError.check(status, "nak \(subject)")
    }

    /// Tells the server the message is still being worked on: its ack wait restarts.
    public func inProgress() throws(NATSError) {
        let status = lock.withLock { _ in natsMsg_InProgress(handle, nil) }
        try NATSError.check(status, "in progress \(subject)")
    }

    /// Refuses the message for good: the server never redelivers it.
    public func term() throws(NATSError) {
        let status = lock.withLock { _ in natsMsg_Term(handle, nil) }
        try NATSError.check(status, "term \(subject)")
    }
}

extension JetStream {
    /// Binds to (or creates) the durable pull consumer of `config`.
    public func pullConsumer(_ config: PullConsumerConfig) throws(NATSError) -> PullConsumer {
        try PullConsumer(jetStream: self, config: config)
    }

    /// The durable consumer's position; `isNotFound` when the stream or consumer is not there.
    public func consumerInfo(stream: String, durable: String) throws(NATSError) -> ConsumerInfo {
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var code = jsErrCode(0)
        let status = js_GetConsumerInfo(&info, handle, stream, durable, nil, &code)
        try NATSError.check(status, "consumer info \(stream)/\(durable)", jetStreamCode: code)
        // NATS_OK comes with the info.
        guard let info else { throw NATSError(status: NATS_ERR.rawValue, operation: "consumer info", text: "none") }
        defer { jsConsumerInfo_Destroy(info) }
        return ConsumerInfo(info)
    }

    /// Deletes a durable consumer with its position and pending acks.
    public func deleteConsumer(stream: String, durable: String) throws(NATSError) {
        var code = jsErrCode(0)
        let status = js_DeleteConsumer(handle, stream, durable, nil, &code)
        try NATSError.check(status, "delete consumer \(stream)/\(durable)", jetStreamCode: code)
    }
}
