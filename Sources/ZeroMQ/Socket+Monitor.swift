import CZeroMQ

/// A change in a socket's connections, as reported by `zmq_socket_monitor`.
public enum SocketEvent: Sendable, Equatable {
    /// A connection to `endpoint` was made (TCP level; the ZMTP handshake follows).
    case connected(endpoint: String)
    /// A connect is in progress and will complete later.
    case connectDelayed(endpoint: String)
    /// A reconnect will be tried after `intervalMilliseconds`.
    case connectRetried(endpoint: String, intervalMilliseconds: Int)
    /// The socket is listening on `endpoint`.
    case listening(endpoint: String)
    /// Binding `endpoint` failed with `errno`.
    case bindFailed(endpoint: String, errno: Int32)
    /// A connection from a peer was accepted.
    case accepted(endpoint: String)
    /// Accepting a connection failed with `errno`.
    case acceptFailed(endpoint: String, errno: Int32)
    /// A connection was closed.
    case closed(endpoint: String)
    /// Closing a connection failed with `errno`.
    case closeFailed(endpoint: String, errno: Int32)
    /// The connection to or from `endpoint` broke unexpectedly.
    case disconnected(endpoint: String)
    /// Monitoring has stopped; no more events follow.
    case monitorStopped
    /// The ZMTP handshake with the peer completed; messages flow.
    case handshakeSucceeded(endpoint: String)
    /// The ZMTP handshake failed; `code` is an `errno` or a ZMTP protocol/auth code.
    case handshakeFailed(endpoint: String, code: Int32)
    /// An event this type does not name (newer libzmq), kept raw.
    case other(id: UInt32, value: UInt32, endpoint: String)

    /// Which events to monitor, as the `ZMQ_EVENT_*` bit mask.
    public struct Kinds: OptionSet, Sendable {
        /// The `ZMQ_EVENT_*` bits.
        public let rawValue: Int32
        /// Creates a set from `ZMQ_EVENT_*` bits.
        public init(rawValue: Int32) { self.rawValue = rawValue }
        /// `ZMQ_EVENT_CONNECTED`.
        public static let connected = Kinds(rawValue: ZMQ_EVENT_CONNECTED)
        /// `ZMQ_EVENT_CONNECT_DELAYED`.
        public static let connectDelayed = Kinds(rawValue: ZMQ_EVENT_CONNECT_DELAYED)
        /// `ZMQ_EVENT_CONNECT_RETRIED`.
        public static let connectRetried = Kinds(rawValue: ZMQ_EVENT_CONNECT_RETRIED)
        /// `ZMQ_EVENT_LISTENING`.
        public static let listening = Kinds(rawValue: ZMQ_EVENT_LISTENING)
        /// `ZMQ_EVENT_BIND_FAILED`.
        public static let bindFailed = Kinds(rawValue: ZMQ_EVENT_BIND_FAILED)
        /// `ZMQ_EVENT_ACCEPTED`.
        public static let accepted = Kinds(rawValue: ZMQ_EVENT_ACCEPTED)
        /// `ZMQ_EVENT_ACCEPT_FAILED`.
        public static let acceptFailed = Kinds(rawValue: ZMQ_EVENT_ACCEPT_FAILED)
        /// `ZMQ_EVENT_CLOSED`.
        public static let closed = Kinds(rawValue: ZMQ_EVENT_CLOSED)
        /// `ZMQ_EVENT_CLOSE_FAILED`.
        public static let closeFailed = Kinds(rawValue: ZMQ_EVENT_CLOSE_FAILED)
        /// `ZMQ_EVENT_DISCONNECTED`.
        public static let disconnected = Kinds(rawValue: ZMQ_EVENT_DISCONNECTED)
        /// `ZMQ_EVENT_HANDSHAKE_SUCCEEDED`.
        public static let handshakeSucceeded = Kinds(rawValue: ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
        /// The three `ZMQ_EVENT_HANDSHAKE_FAILED_*` events.
        public static let handshakeFailed = Kinds(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
            | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        /// Every event (`ZMQ_EVENT_ALL`).
        public static let all = Kinds(rawValue: ZMQ_EVENT_ALL)
    }

    /// Decodes the two frames a monitor PAIR socket receives.
    ///
    /// Frame 0 is 6 bytes, a 16-bit event id then a 32-bit value, both in the host's
    /// byte order; frame 1 is the endpoint. Returns `nil` for anything else.
    public init?(frames: [[UInt8]]) {
        guard frames.count == 2, frames[0].count == 6 else { return nil }
        let head = frames[0]
        let id = head.withUnsafeBytes { UInt32($0.loadUnaligned(fromByteOffset: 0, as: UInt16.self)) }
        let value = head.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 2, as: UInt32.self) }
        let endpoint = String(decoding: frames[1], as: UTF8.self)
        let errno = Int32(bitPattern: value)
        switch Int32(id) {
        case ZMQ_EVENT_CONNECTED: self = .connected(endpoint: endpoint)
        case ZMQ_EVENT_CONNECT_DELAYED: self = .connectDelayed(endpoint: endpoint)
        case ZMQ_EVENT_CONNECT_RETRIED: self = .connectRetried(endpoint: endpoint, intervalMilliseconds: Int(value))
        case ZMQ_EVENT_LISTENING: self = .listening(endpoint: endpoint)
        case ZMQ_EVENT_BIND_FAILED: self = .bindFailed(endpoint: endpoint, errno: errno)
        case ZMQ_EVENT_ACCEPTED: self = .accepted(endpoint: endpoint)
        case ZMQ_EVENT_ACCEPT_FAILED: self = .acceptFailed(endpoint: endpoint, errno: errno)
        case ZMQ_EVENT_CLOSED: self = .closed(endpoint: endpoint)
        case ZMQ_EVENT_CLOSE_FAILED: self = .closeFailed(endpoint: endpoint, errno: errno)
        case ZMQ_EVENT_DISCONNECTED: self = .disconnected(endpoint: endpoint)
        case ZMQ_EVENT_MONITOR_STOPPED: self = .monitorStopped
        case ZMQ_EVENT_HANDSHAKE_SUCCEEDED: self = .handshakeSucceeded(endpoint: endpoint)
        case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL, ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL,
             ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
            self = .handshakeFailed(endpoint: endpoint, code: errno)
        default: self = .other(id: id, value: value, endpoint: endpoint)
        }
    }
}

extension Socket {
    /// Starts monitoring this socket and returns a PAIR socket that receives its events.
    ///
    /// libzmq publishes the events on an `inproc` PAIR endpoint; the returned socket is
    /// connected to it, in the same context. Read it with ``receiveEvent(dontWait:)``,
    /// typically beside this socket in a ``Poller``. Like this socket, it belongs to one
    /// thread. Call ``stopMonitor()`` before closing it.
    ///
    /// - Parameters:
    ///   - events: The events to report.
    ///   - endpoint: The `inproc://` endpoint to publish on; by default one unique to this socket.
    /// - Returns: The connected PAIR socket.
    public func monitor(events: SocketEvent.Kinds = .all, endpoint: String? = nil) throws(ZMQError) -> Socket {
        let handle = try live("zmq_socket_monitor")
        let address = endpoint ?? "inproc://zmq-monitor-\(UInt(bitPattern: handle))"
        if zmq_socket_monitor(handle, address, events.rawValue) != 0 {
            throw ZMQError.last("zmq_socket_monitor \(address)")
        }
        let pair = try Socket(context: context, type: .pair)
        try pair.setLinger(0)
        try pair.connect(address)
        return pair
    }

    /// Stops the monitoring started by ``monitor(events:endpoint:)``.
    public func stopMonitor() {
        if let handle = rawHandle { zmq_socket_monitor(handle, nil, 0) }
    }

    /// On a monitor PAIR socket, receives one event.
    ///
    /// - Parameter dontWait: Return `nil` instead of blocking when nothing is queued.
    /// - Returns: The decoded event, or `nil` with nothing to read or a message that is not an event.
    public func receiveEvent(dontWait: Bool = false) throws(ZMQError) -> SocketEvent? {
        guard let frames = try receive(dontWait: dontWait) else { return nil }
        return SocketEvent(frames: frames)
    }
}
