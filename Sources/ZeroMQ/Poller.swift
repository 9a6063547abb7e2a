import CZeroMQ

/// Waits on several sockets at once (`zmq_poll`).
///
/// Owned by the thread that owns its sockets.
public struct Poller {
    /// What to wait for on one socket.
    public struct Events: OptionSet, Sendable {
        public let rawValue: Int16
        public init(rawValue: Int16) { self.rawValue = rawValue }
        /// A message can be received.
        public static let readable = Events(rawValue: Int16(ZMQ_POLLIN))
        /// A message can be sent.
        public static let writable = Events(rawValue: Int16(ZMQ_POLLOUT))
    }

    private var sockets: [Socket] = []
    private var items: [zmq_pollitem_t] = []

    public init() {}

    /// Adds `socket`; its index in the result of `poll` is the order of addition.
    public mutating func add(_ socket: Socket, events: Events = .readable) {
        sockets.append(socket)
        items.append(zmq_pollitem_t(socket: socket.rawHandle, fd: 0, events: events.rawValue, revents: 0))
    }

    /// Waits until a socket is ready or `timeoutMilliseconds` pass (-1 waits forever).
    ///
    /// - Returns: For each socket, in order of addition, the events it is ready for.
    public mutating func poll(timeoutMilliseconds: Int) throws(ZMQError) -> [Events] {
        while true {
            let rc = items.withUnsafeMutableBufferPointer {
                zmq_poll($0.baseAddress, Int32($0.count), timeoutMilliseconds)
            }
            if rc >= 0 { return items.map { Events(rawValue: $0.revents) } }
            let error = ZMQError.last("zmq_poll")
            if error.interrupted { continue }
            throw error
        }
    }
}
