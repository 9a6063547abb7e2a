import CNATS
import Synchronization

/// How to reach a NATS cluster and how to behave when a server goes away.
public struct ConnectOptions: Sendable {
    /// The servers to try, such as `nats://10.0.0.1:4222`; libnats also learns the rest of
    /// the cluster from the server it reaches.
    public var servers: [String]
    /// The name the server shows for this connection (`/connz`), for finding a process.
    public var name: String?
    /// How long one attempt to connect to one server may take.
    public var timeout: Duration
    /// Whether to reconnect after losing the server (to it or another of the cluster).
    public var allowReconnect: Bool
    /// Attempts per server before giving up, -1 for no limit.
    public var maxReconnect: Int
    /// The pause between two attempts at the same server.
    public var reconnectWait: Duration
    /// Try the servers in the order given instead of libnats's random order.
    public var noRandomize: Bool
    /// A PEM file of the certificates of the authorities that sign the servers'
    /// certificates. With it the connection is TLS or nothing: a server whose certificate
    /// they did not sign, or one that does not speak TLS, is refused. Without it, a server
    /// that requires TLS is refused too (no authority to check it against).
    public var trustedCertificates: String?

    public init(
        servers: [String],
        name: String? = nil,
        timeout: Duration = .seconds(2),
        allowReconnect: Bool = true,
        maxReconnect: Int = 60,
        reconnectWait: Duration = .seconds(2),
        noRandomize: Bool = false,
        trustedCertificates: String? = nil
    ) {
        self.servers = servers
        self.name = name
        self.timeout = timeout
        self.allowReconnect = allowReconnect
        self.maxReconnect = maxReconnect
        self.reconnectWait = reconnectWait
        self.noRandomize = noRandomize
        self.trustedCertificates = trustedCertificates
    }
}

/// One connection to a NATS server or cluster.
///
/// libnats connections are thread-safe (every call takes the connection's lock), so this
/// type is `Sendable` and may be shared by tasks and threads. libnats runs its own
/// threads for reading, reconnecting and timers; what this wrapper gives libnats as a
/// callback only hands a result off, never blocks or publishes.
public final class Connection: @unchecked Sendable {
    let handle: OpaquePointer
    /// This connection's number in ``AsyncAcks``, for the closed callback.
    let id: Int
    /// The options it was made with.
    public let options: ConnectOptions

    /// Connects to the first server of `options.servers` that answers.
    ///
    /// - Throws: ``NATSError`` naming the servers when none could be reached
    ///   (`isNoServer`), or a bad option.
    public init(_ options: ConnectOptions) throws(NATSError) {
        let what = "connect \(ServerURL.redacted(options.servers))"
        var opts: OpaquePointer?
        try NATSError.check(natsOptions_Create(&opts), "natsOptions_Create")
        // natsOptions_Create returns NATS_OK only with options.
        guard let opts else { throw NATSError(status: NATS_NO_MEMORY.rawValue, operation: what, text: "no options") }
        defer { natsOptions_Destroy(opts) }
        let strings = CStrings(options.servers)
        var servers = strings.pointers
        try NATSError.check(natsOptions_SetServers(opts, &servers, Int32(servers.count)), "\(what): servers")
        if let name = options.name { try NATSError.check(natsOptions_SetName(opts, name), "\(what): name") }
        try NATSError.check(natsOptions_SetTimeout(opts, options.timeout.natsMilliseconds), "\(what): timeout")
        try NATSError.check(natsOptions_SetAllowReconnect(opts, options.allowReconnect), "\(what): reconnect")
        try NATSError.check(natsOptions_SetMaxReconnect(opts, Int32(options.maxReconnect)), "\(what): max reconnect")
        try NATSError.check(natsOptions_SetReconnectWait(opts, options.reconnectWait.natsMilliseconds), "\(what): reconnect wait")
        try NATSError.check(natsOptions_SetNoRandomize(opts, options.noRandomize), "\(what): no randomize")
        if let authorities = options.trustedCertificates {
            try NATSError.check(natsOptions_SetSecure(opts, true), "\(what): TLS")
            try NATSError.check(natsOptions_LoadCATrustedCertificates(opts, authorities), "\(what): trusted certificates")
        }
        let id = AsyncAcks.shared.newConnection()
        try NATSError.check(
            natsOptions_SetClosedCB(opts, connectionClosed, UnsafeMutableRawPointer(bitPattern: id)), "\(what): closed callback")
        var handle: OpaquePointer?
        let status = natsConnection_Connect(&handle, opts)
        guard status == NATS_OK, let handle else {
            AsyncAcks.shared.connectionClosed(id)
            throw NATSError.last(status == NATS_OK ? NATS_ERR : status, what)
        }
        self.handle = handle
        self.id = id
        self.options = options
    }

    deinit {
        natsConnection_Destroy(handle)
    }

    /// Closes the connection: pending subscriptions end, async publishes still waiting
    /// for their ack fail with `NATS_CONNECTION_CLOSED`. Closing twice is harmless.
    public func close() {
        natsConnection_Close(handle)
    }

    /// `true` once closed, by ``close()`` or because reconnecting gave up.
    public var isClosed: Bool { natsConnection_IsClosed(handle) }

    /// The URL of the server this connection is on now, `nil` while disconnected.
    public var connectedURL: String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard natsConnection_GetConnectedUrl(handle, &buffer, buffer.count) == NATS_OK, buffer[0] != 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: Core NATS

    /// Publishes `payload` on `subject` (at most once: core NATS keeps nothing).
    public func publish(_ subject: String, _ payload: [UInt8], headers: Headers = Headers()) throws(NATSError) {
        if headers.isEmpty {
            let status = payload.withUnsafeBytes { natsConnection_Publish(handle, subject, $0.baseAddress, Int32($0.count)) }
            try NATSError.check(status, "publish \(subject)")
            return
        }
        let message = try NativeMessage.make(subject: subject, payload: payload, headers: headers, operation: "publish")
        defer { natsMsg_Destroy(message) }
        try NATSError.check(natsConnection_PublishMsg(handle, message), "publish \(subject)")
    }

    /// Waits until the server has processed everything sent so far.
    public func flush(timeout: Duration = .seconds(5)) throws(NATSError) {
        try NATSError.check(natsConnection_FlushTimeout(handle, timeout.natsMilliseconds), "flush")
    }

    /// Sends `payload` to `subject` with a fresh reply subject and waits up to `timeout`
    /// for the one answer (a JetStream API call, such as `$JS.API.STREAM.INFO.<name>`).
    ///
    /// - Throws: ``NATSError``: a timeout, or `NATS_NO_RESPONDERS` when nobody listens.
    public func request(_ subject: String, _ payload: [UInt8], timeout: Duration = .seconds(5)) throws(NATSError) -> Message {
        var reply: OpaquePointer?
        let status = payload.withUnsafeBytes {
            natsConnection_Request(&reply, handle, subject, $0.baseAddress, Int32($0.count), timeout.natsMilliseconds)
        }
        try NATSError.check(status, "request \(subject)")
        // NATS_OK comes only with a reply.
        guard let reply else { throw NATSError(status: NATS_ERR.rawValue, operation: "request \(subject)", text: "no reply") }
        defer { natsMsg_Destroy(reply) }
        return Message(copying: reply)
    }

    /// Subscribes to `subject` (wildcards `*` and `>` allowed); messages queue in the
    /// subscription until ``Subscription/next(timeout:)`` takes them.
    public func subscribe(_ subject: String) throws(NATSError) -> Subscription {
        var sub: OpaquePointer?
        try NATSError.check(natsConnection_SubscribeSync(&sub, handle, subject), "subscribe \(subject)")
        // NATS_OK comes only with a subscription.
        guard let sub else { throw NATSError(status: NATS_ERR.rawValue, operation: "subscribe \(subject)", text: "no subscription") }
        return Subscription(connection: self, handle: sub, subject: subject)
    }
}

/// libnats's closed callback: fails the async publishes of this connection that still
/// wait for an ack. Runs on a libnats thread; it only resumes continuations.
private let connectionClosed: natsConnectionHandler = { _, closure in
    AsyncAcks.shared.connectionClosed(Int(bitPattern: closure))
}

/// A core NATS subscription whose messages are taken one by one, blocking.
///
/// libnats subscriptions take their own lock, so this may be shared; ``next(timeout:)``
/// blocks the calling thread and belongs on a thread of its own, not in a Swift task.
public final class Subscription: @unchecked Sendable {
    /// Kept alive as long as the subscription.
    public let connection: Connection
    public let subject: String
    let handle: OpaquePointer

    init(connection: Connection, handle: OpaquePointer, subject: String) {
        self.connection = connection
        self.handle = handle
        self.subject = subject
    }

    deinit { SubscriptionReaper.destroy(handle, of: connection) }

    /// The next message, or `nil` when none came within `timeout`.
    public func next(timeout: Duration) throws(NATSError) -> Message? {
        var message: OpaquePointer?
        let status = natsSubscription_NextMsg(&message, handle, timeout.natsMilliseconds)
        if status == NATS_TIMEOUT { return nil }
        try NATSError.check(status, "next message on \(subject)")
        // NATS_OK comes only with a message.
        guard let message else { return nil }
        defer { natsMsg_Destroy(message) }
        return Message(copying: message)
    }

    /// Stops the subscription; messages already queued are dropped.
    public func unsubscribe() throws(NATSError) {
        try NATSError.check(natsSubscription_Unsubscribe(handle), "unsubscribe \(subject)")
    }
}
