import CNATS

/// Where a stream keeps its messages.
public enum StorageType: Sendable, Equatable {
    /// On disk, in the server's store directory: survives a restart.
    case file
    /// In memory: gone with the server.
    case memory

    var native: jsStorageType { self == .file ? js_FileStorage : js_MemoryStorage }
    init(_ native: jsStorageType) { self = native == js_MemoryStorage ? .memory : .file }
}

/// The configuration of a JetStream stream: what this wrapper sets, the rest at the
/// server's defaults (limits retention, no size limit).
public struct StreamConfig: Sendable, Equatable {
    public var name: String
    /// The subjects the stream captures (wildcards allowed).
    public var subjects: [String]
    public var storage: StorageType
    /// Copies of every message in a cluster: 1, or 3 for surviving one lost server.
    public var replicas: Int
    /// How long the server remembers a `Nats-Msg-Id` to drop a republished duplicate.
    public var duplicateWindow: Duration

    public init(name: String, subjects: [String], storage: StorageType = .file, replicas: Int = 1,
                duplicateWindow: Duration = .seconds(120)) {
        self.name = name
        self.subjects = subjects
        self.storage = storage
        self.replicas = replicas
        self.duplicateWindow = duplicateWindow
    }

    init(_ native: jsStreamConfig) {
        name = string(native.Name) ?? ""
        subjects = (0..<Int(native.SubjectsLen)).compactMap { string(native.Subjects?[$0]) }
        storage = StorageType(native.Storage)
        replicas = Int(native.Replicas)
        duplicateWindow = .natsNanoseconds(native.Duplicates)
    }

    /// Calls `body` with the libnats struct, valid during the call only.
    func withNative<R>(_ body: (inout jsStreamConfig) -> R) -> R {
        let strings = CStrings()
        var config = jsStreamConfig()
        jsStreamConfig_Init(&config)
        config.Name = strings.add(name)
        var subjectPointers = subjects.map { strings.add($0) }
        config.Storage = storage.native
        config.Replicas = Int64(replicas)
        config.Duplicates = duplicateWindow.natsNanoseconds
        config.SubjectsLen = Int32(subjectPointers.count)
        return subjectPointers.withUnsafeMutableBufferPointer { buffer in
            config.Subjects = buffer.baseAddress
            return withExtendedLifetime(strings) { body(&config) }
        }
    }
}

/// A stream's configuration and state as the server reports them.
public struct StreamInfo: Sendable, Equatable {
    public var config: StreamConfig
    /// Messages stored now.
    public var messages: UInt64
    public var bytes: UInt64
    public var firstSequence: UInt64
    public var lastSequence: UInt64
    public var consumerCount: Int
    /// The server leading the stream's replication group, in a cluster.
    public var leader: String?

    init(_ native: UnsafeMutablePointer<jsStreamInfo>) {
        let info = native.pointee
        config = info.Config.map { StreamConfig($0.pointee) } ?? StreamConfig(name: "", subjects: [])
        messages = info.State.Msgs
        bytes = info.State.Bytes
        firstSequence = info.State.FirstSeq
        lastSequence = info.State.LastSeq
        consumerCount = Int(info.State.Consumers)
        leader = info.Cluster.flatMap { string($0.pointee.Leader) }
    }
}

/// The server's acknowledgment of a JetStream publish: the message is stored (on as many
/// replicas as the stream has, for a replicated stream).
public struct PubAck: Sendable, Equatable {
    public var stream: String
    /// The message's sequence in the stream; for a duplicate, the sequence of the original.
    public var sequence: UInt64
    /// `true` when the server had this `Nats-Msg-Id` already, within the duplicate window,
    /// and stored nothing new.
    public var duplicate: Bool
    public var domain: String?

    public init(stream: String, sequence: UInt64, duplicate: Bool, domain: String? = nil) {
        self.stream = stream
        self.sequence = sequence
        self.duplicate = duplicate
        self.domain = domain
    }

    init(_ native: jsPubAck) {
        stream = string(native.Stream) ?? ""
        sequence = native.Sequence
        duplicate = native.Duplicate
        domain = string(native.Domain).flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// Settings of a JetStream context.
public struct JetStreamOptions: Sendable {
    /// How long a JetStream API request (stream info, a sync publish's ack) may take.
    public var requestTimeout: Duration
    /// How long an async publish waits for its ack before failing with a timeout.
    public var asyncAckTimeout: Duration
    /// Async publishes in flight at most; one more waits up to ``stallWait`` in the
    /// publishing call (blocking its thread that long), then fails.
    public var maxPendingAsync: Int
    public var stallWait: Duration

    public init(requestTimeout: Duration = .seconds(5), asyncAckTimeout: Duration = .seconds(5),
                maxPendingAsync: Int = 4_000, stallWait: Duration = .milliseconds(200)) {
        self.requestTimeout = requestTimeout
        self.asyncAckTimeout = asyncAckTimeout
        self.maxPendingAsync = maxPendingAsync
        self.stallWait = stallWait
    }
}

/// A JetStream context on a connection: streams, publishing with acks, consumers, KV.
///
/// libnats's JetStream context takes its own lock, so this may be shared by tasks.
public final class JetStream: @unchecked Sendable {
    /// Kept alive as long as the context.
    public let connection: Connection
    public let options: JetStreamOptions
    let handle: OpaquePointer
    /// This context's number in ``AsyncAcks``.
    let id: Int

    /// Makes a JetStream context; nothing is asked of the server yet.
    public init(connection: Connection, options: JetStreamOptions = JetStreamOptions()) throws(NATSError) {
        let id = AsyncAcks.shared.newContext(connection: connection.id)
        var native = jsOptions()
        jsOptions_Init(&native)
        native.Wait = options.requestTimeout.natsMilliseconds
        native.PublishAsync.MaxPending = Int64(options.maxPendingAsync)
        native.PublishAsync.StallWait = options.stallWait.natsMilliseconds
        native.PublishAsync.AckHandler = asyncAckHandler
        native.PublishAsync.AckHandlerClosure = UnsafeMutableRawPointer(bitPattern: id)
        var handle: OpaquePointer?
        let status = natsConnection_JetStream(&handle, connection.handle, &native)
        guard status == NATS_OK, let handle else {
            AsyncAcks.shared.contextClosed(id)
            throw NATSError.last(status == NATS_OK ? NATS_ERR : status, "JetStream context")
        }
        self.connection = connection
        self.options = options
        self.handle = handle
        self.id = id
    }

    deinit {
        AsyncAcks.shared.contextClosed(id)
        jsCtx_Destroy(handle)
    }

    // MARK: Streams

    /// Creates a stream; the same configuration again is no error.
    @discardableResult
    public func addStream(_ config: StreamConfig) throws(NATSError) -> StreamInfo {
        try streamCall("add stream \(config.name)") { info, code in
            config.withNative { js_AddStream(&info, handle, &$0, nil, &code) }
        }
    }

    /// Changes a stream (subjects, replicas, duplicate window; not its storage).
    @discardableResult
    public func updateStream(_ config: StreamConfig) throws(NATSError) -> StreamInfo {
        try streamCall("update stream \(config.name)") { info, code in
            config.withNative { js_UpdateStream(&info, handle, &$0, nil, &code) }
        }
    }

    /// The stream's configuration and state; `isNotFound` when there is none.
    public func streamInfo(_ name: String) throws(NATSError) -> StreamInfo {
        try streamCall("stream info \(name)") { info, code in js_GetStreamInfo(&info, handle, name, nil, &code) }
    }

    /// Deletes a stream with its messages and consumers.
    public func deleteStream(_ name: String) throws(NATSError) {
        var code = jsErrCode(0)
        let status = js_DeleteStream(handle, name, nil, &code)
        try NATSError.check(status, "delete stream \(name)", jetStreamCode: code)
    }

    private func streamCall(
        _ operation: String,
        _ call: (inout UnsafeMutablePointer<jsStreamInfo>?, inout jsErrCode) -> natsStatus
    ) throws(NATSError) -> StreamInfo {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        let status = call(&info, &code)
        try NATSError.check(status, operation, jetStreamCode: code)
        // NATS_OK comes with the info we asked for.
        guard let info else { throw NATSError(status: NATS_ERR.rawValue, operation: operation, text: "no stream info") }
        defer { jsStreamInfo_Destroy(info) }
        return StreamInfo(info)
    }

    // MARK: Publishing

    /// Publishes to the stream that captures `subject` and waits for the server's ack.
    ///
    /// - Parameters:
    ///   - messageID: Sent as `Nats-Msg-Id`: the server stores a given id once per
    ///     duplicate window and answers a repeat with the first one's sequence and
    ///     `duplicate` set.
    ///   - headers: More headers, such as atomic batch headers.
    /// - Throws: ``NATSError``: a timeout, no stream for the subject (`NATS_NO_RESPONDERS`
    ///   with no JetStream code), or the server's refusal with its JetStream code.
    @discardableResult
    public func publish(_ subject: String, _ payload: [UInt8], messageID: String? = nil,
                        headers: Headers = Headers()) throws(NATSError) -> PubAck {
        let message = try makeMessage(subject, payload, messageID: messageID, headers: headers)
        defer { natsMsg_Destroy(message) }
        var ack: UnsafeMutablePointer<jsPubAck>?
        var code = jsErrCode(0)
        let status = js_PublishMsg(&ack, handle, message, nil, &code)
        try NATSError.check(status, "publish \(subject)", jetStreamCode: code)
        // NATS_OK comes with the ack we asked for.
        guard let ack else { throw NATSError(status: NATS_ERR.rawValue, operation: "publish \(subject)", text: "no ack") }
        defer { jsPubAck_Destroy(ack) }
        return PubAck(ack.pointee)
    }

    /// Publishes like ``publish(_:_:messageID:headers:)`` without holding a thread while
    /// the ack travels: the task is resumed by libnats's ack handler, or fails after
    /// ``JetStreamOptions/asyncAckTimeout`` or when the connection closes.
    ///
    /// Many tasks may publish at once; the server sees them in the order their calls
    /// reached libnats. Cancelling the task does not cancel the publish.
    @discardableResult
    public func publishAsync(_ subject: String, _ payload: [UInt8], messageID: String? = nil,
                             headers: Headers = Headers()) async throws(NATSError) -> PubAck {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<PubAck, NATSError>, Never>) in
            publishAsync(subject, payload, messageID: messageID, headers: headers) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Hands the message to libnats on the calling thread and returns without waiting for
    /// the ack; `completion` gets the ack or the failure later, exactly once.
    ///
    /// Messages published this way from one thread reach the server in the order of the
    /// calls: what an ordered publisher (an event loop) needs, where tasks started one
    /// after another may run in any order. `completion` runs on a libnats thread (or on
    /// this one, when the message could not be handed over): it must only hand the result
    /// off, never block or publish. A publish fails after
    /// ``JetStreamOptions/asyncAckTimeout`` without an ack, or when the connection closes.
    /// With ``JetStreamOptions/maxPendingAsync`` publishes in flight, this call blocks up to
    /// ``JetStreamOptions/stallWait`` and then fails.
    public func publishAsync(_ subject: String, _ payload: [UInt8], messageID: String? = nil, headers: Headers = Headers(),
                             completion: @escaping @Sendable (Result<PubAck, NATSError>) -> Void) {
        let message: OpaquePointer
        do {
            message = try makeMessage(subject, payload, messageID: messageID, headers: headers)
        } catch {
            completion(.failure(error))
            return
        }
        guard AsyncAcks.shared.register(context: id, message: message, completion) else {
            natsMsg_Destroy(message)
            completion(.failure(NATSError(
                status: NATS_CONNECTION_CLOSED.rawValue, operation: "publish async \(subject)", text: "connection closed")))
            return
        }
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        options.MaxWait = self.options.asyncAckTimeout.natsMilliseconds
        var owned: OpaquePointer? = message
        let status = js_PublishMsgAsync(handle, &owned, &options)
        if status != NATS_OK {
            let error = NATSError.last(status, "publish async \(subject)")
            // libnats did not take the message: it and the waiter are still ours. The waiter
            // is taken before the message is destroyed: once freed, its address may be another
            // publish's key, whose waiter this would take instead.
            let waiter = AsyncAcks.shared.take(context: id, message: message)
            natsMsg_Destroy(owned)
            waiter?(.failure(error))
        }
    }

    private func makeMessage(_ subject: String, _ payload: [UInt8], messageID: String?,
                             headers: Headers) throws(NATSError) -> OpaquePointer {
        var all = headers
        if let messageID { all[Headers.messageID] = messageID }
        return try NativeMessage.make(subject: subject, payload: payload, headers: all, operation: "publish")
    }
}
