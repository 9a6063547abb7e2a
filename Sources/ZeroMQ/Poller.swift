import CZeroMQ

/// Waits on several sockets and plain file descriptors at once (`zmq_poll`).
///
/// Owned by the thread that owns its sockets. A plain file descriptor (an
/// `eventfd`, a pipe) lets another thread wake the owner without touching its
/// sockets.
public struct Poller {
    /// What to wait for on one socket or file descriptor.
    public struct Events: OptionSet, Sendable {
        /// The `ZMQ_POLL*` bits.
        public let rawValue: Int16
        /// Creates a set from `ZMQ_POLL*` bits.
        public init(rawValue: Int16) { self.rawValue = rawValue }
        /// A message (or, for a file descriptor, data) can be received.
        public static let readable = Events(rawValue: Int16(ZMQ_POLLIN))
        /// A message (or, for a file descriptor, data) can be sent.
        public static let writable = Events(rawValue: Int16(ZMQ_POLLOUT))
    }

    /// The sockets polled, kept alive while they are polled; `nil` for a file descriptor.
    private var sockets: [Socket?] = []
    private var items: [zmq_pollitem_t] = []

    /// Creates an empty poller.
    public init() {}

    /// The number of sockets and file descriptors polled.
    public var count: Int { items.count }

    /// Adds `socket`; its index in the result of `poll` is the order of addition.
    public mutating func add(_ socket: Socket, events: Events = .readable) {
        sockets.append(socket)
        items.append(zmq_pollitem_t(socket: socket.rawHandle, fd: 0, events: events.rawValue, revents: 0))
    }

    /// Adds a plain file descriptor; its index in the result of `poll` is the order of addition.
    ///
    /// The poller does not own the descriptor: the caller keeps it open while it is polled
    /// and closes it afterwards.
    ///
    /// - Parameters:
    ///   - fileDescriptor: An open descriptor that `poll(2)` accepts (an `eventfd`, a pipe, a socket).
    ///   - events: What to wait for.
    public mutating func add(fileDescriptor: Int32, events: Events = .readable) {
        sockets.append(nil)
        items.append(zmq_pollitem_t(socket: nil, fd: fileDescriptor, events: events.rawValue, revents: 0))
    }

    /// Waits until a socket or descriptor is ready or `timeoutMilliseconds` pass (-1 waits forever).
    ///
    /// A signal that interrupts the wait restarts it with the full timeout.
    ///
    /// - Returns: For each socket or descriptor, in order of addition, the events it is ready for.
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
