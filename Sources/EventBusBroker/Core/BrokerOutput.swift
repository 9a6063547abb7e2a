import ZeroMQ

/// Everything the broker core sends: messages to peers (the ROUTER side)
/// and the live stream (the XPUB side).
///
/// The loop gives the core a ``SocketOutput`` over its two sockets; tests give
/// it an ``OutputRecording`` and read what the core sent as plain values, with no
/// socket and no wait. The calls mirror ZeroMQ's, so that a delivery is still
/// written frame by frame straight into libzmq's buffers, never copied into a
/// message first.
protocol BrokerOutput: AnyObject {
    /// Sends one frame of a message to a peer; the first frame of each message
    /// is the peer's routing id. Returns `false` when the peer's queue is full
    /// (only ever at the first frame: nothing of the message was sent).
    @discardableResult
    func sendFrame(_ bytes: [UInt8], more: Bool) throws(ZMQError) -> Bool
    /// The same, from bytes that lie elsewhere.
    @discardableResult
    func sendFrame(_ bytes: UnsafeRawBufferPointer, more: Bool) throws(ZMQError) -> Bool
    /// The same, for a frame of `size` bytes that `fill` writes in place.
    @discardableResult
    func sendFrame(size: Int, more: Bool, fill: (UnsafeMutableRawBufferPointer) -> Void) throws(ZMQError) -> Bool
    /// Sends a whole message to `peer`; `false` when its queue is full.
    @discardableResult
    func send(to peer: [UInt8], _ frames: [[UInt8]]) throws(ZMQError) -> Bool

    /// Publishes one event on the live stream: TOPIC, SEQ (8 bytes, big-endian),
    /// EVENT. With `dropIfFull` false, a full subscriber makes it return `false`
    /// (nothing sent); with true, the full subscribers miss it and the others get it.
    @discardableResult
    func publish(topic: [UInt8], seq: UInt64, event: [UInt8], dropIfFull: Bool) throws(ZMQError) -> Bool
    /// Applies a stream subscription (or its removal) that the core allowed.
    func subscribe(_ prefix: [UInt8], _ on: Bool) throws(ZMQError)
}

/// ``BrokerOutput`` over the loop's ROUTER and XPUB sockets; never blocks.
final class SocketOutput: BrokerOutput {
    let router: Socket
    let stream: Socket

    init(router: Socket, stream: Socket) {
        self.router = router
        self.stream = stream
    }

    @discardableResult
    func sendFrame(_ bytes: [UInt8], more: Bool) throws(ZMQError) -> Bool {
        try router.sendFrame(bytes, more: more, dontWait: true)
    }

    @discardableResult
    func sendFrame(_ bytes: UnsafeRawBufferPointer, more: Bool) throws(ZMQError) -> Bool {
        try router.sendFrame(bytes, more: more, dontWait: true)
    }

    @discardableResult
    func sendFrame(size: Int, more: Bool, fill: (UnsafeMutableRawBufferPointer) -> Void) throws(ZMQError) -> Bool {
        try router.sendFrame(size: size, more: more, dontWait: true, fill: fill)
    }

    @discardableResult
    func send(to peer: [UInt8], _ frames: [[UInt8]]) throws(ZMQError) -> Bool {
        try router.send(peer, frames, dontWait: true)
    }

    @discardableResult
    func publish(topic: [UInt8], seq: UInt64, event: [UInt8], dropIfFull: Bool) throws(ZMQError) -> Bool {
        guard dropIfFull else { return try sendStreamFrames(topic: topic, seq: seq, event: event) }
        // XPUB_NODROP is on so that a full subscriber is seen; off for this one send.
        try stream.setXPubNoDrop(false)
        defer { try? stream.setXPubNoDrop(true) }
        return try sendStreamFrames(topic: topic, seq: seq, event: event)
    }

    /// The three frames, each from where it lies: no array of frames, no array for the SEQ
    /// (two allocations per event of `out` and `diag` before).
    private func sendStreamFrames(topic: [UInt8], seq: UInt64, event: [UInt8]) throws(ZMQError) -> Bool {
        var bigEndian = seq.bigEndian
        let sent = withUnsafeBytes(of: &bigEndian) { seqBytes in
            Result { () throws(ZMQError) -> Bool in
                try stream.sendMessage(count: 3) { index, more throws(ZMQError) in
                    switch index {
                    case 0: try stream.sendFrame(topic, more: more, dontWait: true)
                    case 1: try stream.sendFrame(seqBytes, more: more, dontWait: true)
                    default: try stream.sendFrame(event, more: more, dontWait: true)
                    }
                }
            }
        }
        return try sent.get()
    }

    func subscribe(_ prefix: [UInt8], _ on: Bool) throws(ZMQError) {
        if on { try stream.subscribe(prefix) } else { try stream.unsubscribe(prefix) }
    }
}
