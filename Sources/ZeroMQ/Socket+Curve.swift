import CZeroMQ

extension Socket {
    /// Makes this socket a CURVE server with `secretKey` (Z85): every peer must
    /// complete a CurveZMQ handshake, and ZAP (if a handler is bound) decides who
    /// may connect. Set before `bind`.
    public func makeCurveServer(secretKey: String) throws(ZMQError) {
        try setOption(ZMQ_CURVE_SERVER, 1)
        try setOption(ZMQ_CURVE_SECRETKEY, bytes: Self.keyOption(secretKey))
    }

    /// Makes this socket a CURVE client of the server whose public key is
    /// `serverKey`, presenting `keys` as its identity. Set before `connect`.
    public func makeCurveClient(keys: CurveKeyPair, serverKey: String) throws(ZMQError) {
        try setOption(ZMQ_CURVE_SERVERKEY, bytes: Self.keyOption(serverKey))
        try setOption(ZMQ_CURVE_PUBLICKEY, bytes: Self.keyOption(keys.publicKey))
        try setOption(ZMQ_CURVE_SECRETKEY, bytes: Self.keyOption(keys.secretKey))
    }

    /// The ZAP domain sent to the authentication handler for this socket's peers.
    public func setZAPDomain(_ domain: String) throws(ZMQError) {
        try setOption(ZMQ_ZAP_DOMAIN, bytes: Array(domain.utf8))
    }

    /// XPUB: subscriptions are passed up and applied only by ``subscribe(_:)`` /
    /// ``unsubscribe(_:)`` on this socket, for the peer whose subscription
    /// message was read last (`ZMQ_XPUB_MANUAL`).
    public func setXPubManual(_ on: Bool) throws(ZMQError) { try setOption(ZMQ_XPUB_MANUAL, on ? 1 : 0) }

    /// The CURVE mechanism is in use on this socket (`ZMQ_MECHANISM` is `ZMQ_CURVE`).
    public var usesCurve: Bool {
        get throws(ZMQError) { try intOption(ZMQ_MECHANISM) == ZMQ_CURVE }
    }

    /// Receives one multipart message with the `User-Id` its peer was
    /// authenticated as by ZAP (`zmq_msg_gets(msg, "User-Id")`).
    ///
    /// - Parameter dontWait: Return `nil` instead of blocking when nothing is queued.
    /// - Returns: The frames and the user id (`nil` when the connection carries
    ///   none, e.g. without a security mechanism), or `nil` with `dontWait` and
    ///   nothing to read, or after the receive timeout.
    public func receiveWithUserID(dontWait: Bool = false) throws(ZMQError) -> (frames: [[UInt8]], userID: String?)? {
        try receiveMessage(dontWait: dontWait, readingUserID: true)
    }

    /// A Z85 key as libzmq takes it: 40 characters and a terminating NUL.
    static func keyOption(_ key: String) throws(ZMQError) -> [UInt8] {
        guard CurveKeyPair.isValidKey(key) else { throw ZMQError(code: EINVAL, operation: "CURVE key (40 Z85 characters)") }
        return Array(key.utf8) + [0]
    }
}
