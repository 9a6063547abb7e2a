import CZeroMQ

/// One ZeroMQ socket.
///
/// libzmq sockets are not thread-safe: a socket must be used by one thread at a
/// time. It is `Sendable` so that ownership can be handed to the thread that will
/// own it (an I/O thread or a poll loop); after that, only that thread touches it.
public final class Socket: @unchecked Sendable {
    /// The context the socket was made in; kept alive as long as the socket.
    public let context: Context
    /// The pattern of this socket.
    public let type: SocketType
    private var handle: UnsafeMutableRawPointer?

    /// Creates a socket of `type` in `context`.
    public init(context: Context, type: SocketType) throws(ZMQError) {
        guard let handle = zmq_socket(context.handle, type.raw) else {
            throw ZMQError.last("zmq_socket")
        }
        self.context = context
        self.type = type
        self.handle = handle
    }

    deinit { close() }

    /// Closes the socket. Pending outgoing messages are kept for the linger period.
    public func close() {
        if let handle {
            zmq_close(handle)
            self.handle = nil
        }
    }

    func live(_ operation: String) throws(ZMQError) -> UnsafeMutableRawPointer {
        guard let handle else { throw ZMQError(code: ENOTSOCK, operation: operation) }
        return handle
    }

    // MARK: Endpoints

    /// Binds to `endpoint` (`tcp://127.0.0.1:7750`, `ipc:///tmp/bus`, `inproc://x`).
    public func bind(_ endpoint: String) throws(ZMQError) {
        if zmq_bind(try live("zmq_bind"), endpoint) != 0 { throw ZMQError.last("zmq_bind \(endpoint)") }
    }

    /// Connects to `endpoint`; the connection is made in the background.
    public func connect(_ endpoint: String) throws(ZMQError) {
        if zmq_connect(try live("zmq_connect"), endpoint) != 0 { throw ZMQError.last("zmq_connect \(endpoint)") }
    }

    /// Stops listening on `endpoint`.
    public func unbind(_ endpoint: String) throws(ZMQError) {
        if zmq_unbind(try live("zmq_unbind"), endpoint) != 0 { throw ZMQError.last("zmq_unbind \(endpoint)") }
    }

    /// Drops the connection to `endpoint`.
    public func disconnect(_ endpoint: String) throws(ZMQError) {
        if zmq_disconnect(try live("zmq_disconnect"), endpoint) != 0 {
            throw ZMQError.last("zmq_disconnect \(endpoint)")
        }
    }

    /// The endpoint last bound, with the port the system chose for `tcp://…:*`.
    public var lastEndpoint: String {
        get throws(ZMQError) {
            let bytes = try bytesOption(ZMQ_LAST_ENDPOINT, capacity: 1024)
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    // MARK: Sending

    /// Sends one multipart message.
    ///
    /// - Parameters:
    ///   - frames: The frames, in order; at least one.
    ///   - dontWait: Return `false` instead of blocking when the message cannot be
    ///     queued now (high-water mark reached, or no peer for a ROUTER address).
    /// - Returns: `true` when the message was queued.
    @discardableResult
    public func send(_ frames: [[UInt8]], dontWait: Bool = false) throws(ZMQError) -> Bool {
        precondition(!frames.isEmpty, "a ZeroMQ message has at least one frame")
        return try send(count: frames.count, dontWait: dontWait) { frames[$0] }
    }

    /// Sends one multipart message made of `head` followed by `frames`, without
    /// building a joined array (a ROUTER's peer id, then the message).
    @discardableResult
    public func send(_ head: [UInt8], _ frames: [[UInt8]], dontWait: Bool = false) throws(ZMQError) -> Bool {
        try send(count: frames.count + 1, dontWait: dontWait) { $0 == 0 ? head : frames[$0 - 1] }
    }

    /// Sends the `count` frames `frame(0)`, `frame(1)`, … as one multipart message.
    private func send(count: Int, dontWait: Bool, frame: (Int) -> [UInt8]) throws(ZMQError) -> Bool {
        try sendMessage(count: count) { index, more throws(ZMQError) in try sendFrame(frame(index), more: more, dontWait: dontWait) }
    }

    /// Sends one multipart message of `count` frames, frame `index` by `sendFrame(index, more)`
    /// (a ``sendFrame(_:more:dontWait:)-(UnsafeRawBufferPointer,_,_)`` call with that `more`):
    /// for frames that lie in different places, none copied into an array first.
    ///
    /// libzmq queues a multipart message atomically: only its first frame can find the queue
    /// full, and then nothing was sent (`false`); a later one refused is an error.
    public func sendMessage(
        count: Int, _ sendFrame: (_ index: Int, _ more: Bool) throws(ZMQError) -> Bool
    ) throws(ZMQError) -> Bool {
        for index in 0..<count {
            guard try sendFrame(index, index < count - 1) else {
                if index == 0 { return false }
                throw ZMQError(code: EAGAIN, operation: "zmq_send")
            }
        }
        return true
    }

    /// Sends one frame of a multipart message, from bytes the caller owns.
    ///
    /// For senders that assemble a message frame by frame without building an
    /// array of arrays (a broker writing many events into one message). A
    /// message is queued atomically: only its first frame can find the queue
    /// full, so after a first frame was queued the caller must send the rest,
    /// the last one with `more: false`.
    ///
    /// - Parameters:
    ///   - bytes: The frame's bytes; copied before the call returns.
    ///   - more: `true` for every frame but the message's last.
    ///   - dontWait: Return `false` instead of blocking when the message cannot be
    ///     queued now (high-water mark reached, or no peer for a ROUTER address).
    /// - Returns: `true` when the frame was queued.
    @discardableResult
    public func sendFrame(_ bytes: UnsafeRawBufferPointer, more: Bool, dontWait: Bool = false) throws(ZMQError) -> Bool {
        let handle = try live("zmq_send")
        let flags = (dontWait ? ZMQ_DONTWAIT : 0) | (more ? ZMQ_SNDMORE : 0)
        while true {
            if zmq_send(handle, bytes.baseAddress, bytes.count, flags) >= 0 { return true }
            let error = ZMQError.last("zmq_send")
            if error.interrupted { continue }
            if error.wouldBlock { return false }
            throw error
        }
    }

    /// Sends one frame of a multipart message; see ``sendFrame(_:more:dontWait:)-(UnsafeRawBufferPointer,_,_)``.
    @discardableResult
    public func sendFrame(_ bytes: [UInt8], more: Bool, dontWait: Bool = false) throws(ZMQError) -> Bool {
        let sent = bytes.withUnsafeBytes { buffer in
            Result { () throws(ZMQError) -> Bool in try sendFrame(buffer, more: more, dontWait: dontWait) }
        }
        return try sent.get()
    }

    /// Sends one frame of `size` bytes that `fill` writes in place, in libzmq's own buffer: for
    /// a sender that assembles a large frame from many pieces without building it first.
    ///
    /// - Parameters:
    ///   - size: The frame's size in bytes.
    ///   - more: `true` for every frame but the message's last.
    ///   - dontWait: Return `false` instead of blocking when the message cannot be queued now.
    ///   - fill: Writes exactly `size` bytes into the buffer it is given.
    /// - Returns: `true` when the frame was queued.
    @discardableResult
    public func sendFrame(size: Int, more: Bool, dontWait: Bool = false,
                          fill: (UnsafeMutableRawBufferPointer) -> Void) throws(ZMQError) -> Bool {
        let handle = try live("zmq_msg_send")
        var message = zmq_msg_t()
        guard zmq_msg_init_size(&message, size) == 0 else { throw ZMQError.last("zmq_msg_init_size") }
        fill(UnsafeMutableRawBufferPointer(start: zmq_msg_data(&message), count: size))
        let flags = (dontWait ? ZMQ_DONTWAIT : 0) | (more ? ZMQ_SNDMORE : 0)
        while true {
            // On success libzmq owns the message; on failure it is still ours to close.
            if zmq_msg_send(&message, handle, flags) >= 0 { return true }
            let error = ZMQError.last("zmq_msg_send")
            if error.interrupted { continue }
            zmq_msg_close(&message)
            if error.wouldBlock { return false }
            throw error
        }
    }

    // MARK: Receiving

    /// Receives one multipart message.
    ///
    /// - Parameter dontWait: Return `nil` instead of blocking when nothing is queued.
    /// - Returns: The frames, or `nil` with `dontWait` and nothing to read, or when a
    ///   receive timeout expired.
    public func receive(dontWait: Bool = false) throws(ZMQError) -> [[UInt8]]? {
        try receiveMessage(dontWait: dontWait, readingUserID: false)?.frames
    }

    /// Receives one multipart message and, when asked, the `User-Id` metadata
    /// of its first frame that carries one (see ``receiveWithUserID(dontWait:)``).
    func receiveMessage(dontWait: Bool, readingUserID: Bool) throws(ZMQError) -> (frames: [[UInt8]], userID: String?)? {
        let handle = try live("zmq_msg_recv")
        var frames: [[UInt8]] = []
        var userID: String?
        var message = zmq_msg_t()
        zmq_msg_init(&message)
        defer { zmq_msg_close(&message) }
        while true {
            let flags: Int32 = (dontWait && frames.isEmpty) ? ZMQ_DONTWAIT : 0
            let rc = zmq_msg_recv(&message, handle, flags)
            if rc < 0 {
                let error = ZMQError.last("zmq_msg_recv")
                if error.interrupted { continue }
                if error.wouldBlock && frames.isEmpty { return nil }
                throw error
            }
            // The ROUTER makes the routing-id frame itself: it may carry no metadata.
            if readingUserID && userID == nil, let text = zmq_msg_gets(&message, "User-Id") {
                userID = String(cString: text)
            }
            let size = zmq_msg_size(&message)
            let data = zmq_msg_data(&message)
            // Copied from a buffer pointer: `[UInt8](unsafeUninitializedCapacity:)` reaches the
            // standard library's unspecialized initializer (a metadata lookup, ~420 instructions).
            if size > 0, let data {
                frames.append(Array(UnsafeBufferPointer(start: data.assumingMemoryBound(to: UInt8.self), count: size)))
            } else {
                frames.append([])
            }
            if zmq_msg_more(&message) == 0 { return (frames, userID) }
        }
    }

    /// Receives one multipart message copying only frame `keep`: for readers
    /// that need one frame of a message (a load generator counting events).
    ///
    /// - Returns: The number of frames and frame `keep` (empty if the message
    ///   is shorter), or `nil` after the receive timeout.
    public func receive(keepingOnly keep: Int) throws(ZMQError) -> (frames: Int, kept: [UInt8])? {
        var kept: [UInt8] = []
        guard let count = try receive(visiting: { index, bytes in if index == keep { kept = Array(bytes) } }) else {
            return nil
        }
        return (count, kept)
    }

    /// Receives one multipart message and shows each frame to `body` in place, without copying it.
    ///
    /// - Parameters:
    ///   - dontWait: Return `nil` instead of blocking when nothing is queued.
    ///   - body: Called with each frame's index and bytes, in order; the bytes
    ///     are valid only during the call.
    /// - Returns: The number of frames, or `nil` with `dontWait` and nothing to
    ///   read, or when a receive timeout expired.
    public func receive(dontWait: Bool = false, visiting body: (Int, UnsafeRawBufferPointer) -> Void) throws(ZMQError) -> Int? {
        let handle = try live("zmq_msg_recv")
        var message = zmq_msg_t()
        zmq_msg_init(&message)
        defer { zmq_msg_close(&message) }
        var count = 0
        while true {
            let flags: Int32 = (dontWait && count == 0) ? ZMQ_DONTWAIT : 0
            let rc = zmq_msg_recv(&message, handle, flags)
            if rc < 0 {
                let error = ZMQError.last("zmq_msg_recv")
                if error.interrupted { continue }
                if error.wouldBlock && count == 0 { return nil }
                throw error
            }
            body(count, UnsafeRawBufferPointer(start: zmq_msg_data(&message), count: zmq_msg_size(&message)))
            count += 1
            if zmq_msg_more(&message) == 0 { return count }
        }
    }

    // MARK: Options

    /// Sets an integer socket option.
    public func setOption(_ option: Int32, _ value: Int32) throws(ZMQError) {
        var value = value
        if zmq_setsockopt(try live("zmq_setsockopt"), option, &value, MemoryLayout<Int32>.size) != 0 {
            throw ZMQError.last("zmq_setsockopt(\(option))")
        }
    }

    /// Sets a binary socket option.
    public func setOption(_ option: Int32, bytes: [UInt8]) throws(ZMQError) {
        let handle = try live("zmq_setsockopt")
        let rc = bytes.withUnsafeBytes { zmq_setsockopt(handle, option, $0.baseAddress, $0.count) }
        if rc != 0 { throw ZMQError.last("zmq_setsockopt(\(option))") }
    }

    /// Reads an integer socket option.
    public func intOption(_ option: Int32) throws(ZMQError) -> Int32 {
        var value: Int32 = 0
        var size = MemoryLayout<Int32>.size
        if zmq_getsockopt(try live("zmq_getsockopt"), option, &value, &size) != 0 {
            throw ZMQError.last("zmq_getsockopt(\(option))")
        }
        return value
    }

    /// Reads a binary socket option of at most `capacity` bytes.
    public func bytesOption(_ option: Int32, capacity: Int) throws(ZMQError) -> [UInt8] {
        let handle = try live("zmq_getsockopt")
        var buffer = [UInt8](repeating: 0, count: capacity)
        var size = capacity
        let rc = buffer.withUnsafeMutableBytes { zmq_getsockopt(handle, option, $0.baseAddress, &size) }
        if rc != 0 { throw ZMQError.last("zmq_getsockopt(\(option))") }
        return Array(buffer.prefix(size))
    }

    /// The outgoing high-water mark in messages (0 = no limit).
    public func setSendHighWaterMark(_ messages: Int32) throws(ZMQError) { try setOption(ZMQ_SNDHWM, messages) }
    /// The incoming high-water mark in messages (0 = no limit).
    public func setReceiveHighWaterMark(_ messages: Int32) throws(ZMQError) { try setOption(ZMQ_RCVHWM, messages) }
    /// How long, in milliseconds, unsent messages are kept after close (-1 forever).
    public func setLinger(_ milliseconds: Int32) throws(ZMQError) { try setOption(ZMQ_LINGER, milliseconds) }

    /// A receive timeout in milliseconds (-1 blocks forever).
    public func setReceiveTimeout(_ milliseconds: Int32) throws(ZMQError) { try setOption(ZMQ_RCVTIMEO, milliseconds) }
    /// A send timeout in milliseconds (-1 blocks forever).
    public func setSendTimeout(_ milliseconds: Int32) throws(ZMQError) { try setOption(ZMQ_SNDTIMEO, milliseconds) }
    /// The routing id this socket presents to a ROUTER peer.
    public func setRoutingID(_ id: [UInt8]) throws(ZMQError) { try setOption(ZMQ_ROUTING_ID, bytes: id) }
    /// SUB: receive messages whose first frame starts with `prefix`.
    public func subscribe(_ prefix: [UInt8]) throws(ZMQError) { try setOption(ZMQ_SUBSCRIBE, bytes: prefix) }
    /// SUB: stop receiving messages for `prefix`.
    public func unsubscribe(_ prefix: [UInt8]) throws(ZMQError) { try setOption(ZMQ_UNSUBSCRIBE, bytes: prefix) }
    /// ROUTER: fail with `EHOSTUNREACH` instead of dropping a message for an unknown peer.
    public func setRouterMandatory(_ on: Bool) throws(ZMQError) { try setOption(ZMQ_ROUTER_MANDATORY, on ? 1 : 0) }
    /// XPUB: pass every subscription message up, duplicates included.
    public func setXPubVerbose(_ on: Bool) throws(ZMQError) { try setOption(ZMQ_XPUB_VERBOSE, on ? 1 : 0) }
    /// XPUB: make a send fail with `EAGAIN` when a matching subscriber's queue is full, instead of
    /// dropping the message for that subscriber silently.
    public func setXPubNoDrop(_ on: Bool) throws(ZMQError) { try setOption(ZMQ_XPUB_NODROP, on ? 1 : 0) }
    /// Queue messages only to completed connections.
    public func setImmediate(_ on: Bool) throws(ZMQError) { try setOption(ZMQ_IMMEDIATE, on ? 1 : 0) }
    /// Reconnect interval in milliseconds.
    public func setReconnectInterval(_ milliseconds: Int32) throws(ZMQError) { try setOption(ZMQ_RECONNECT_IVL, milliseconds) }
    /// Largest inbound message in bytes (-1 no limit); larger ones drop the connection.
    public func setMaxMessageSize(_ bytes: Int64) throws(ZMQError) {
        var value = bytes
        if zmq_setsockopt(try live("zmq_setsockopt"), ZMQ_MAXMSGSIZE, &value, MemoryLayout<Int64>.size) != 0 {
            throw ZMQError.last("zmq_setsockopt(ZMQ_MAXMSGSIZE)")
        }
    }

    /// `true` while a message can be read without blocking.
    public var canReceive: Bool {
        get throws(ZMQError) { (try intOption(ZMQ_EVENTS) & Int32(ZMQ_POLLIN)) != 0 }
    }

    var rawHandle: UnsafeMutableRawPointer? { handle }
}
