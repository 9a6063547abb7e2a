import CZeroMQ

/// A ZeroMQ context: the container of sockets and libzmq's I/O threads.
///
/// A context is thread-safe and may be shared freely. It terminates when the last
/// reference goes away; every socket keeps its context alive, so terminate by
/// closing the sockets first.
public final class Context: Sendable {
    nonisolated(unsafe) let handle: UnsafeMutableRawPointer

    /// Creates a context.
    ///
    /// - Parameter ioThreads: The number of libzmq I/O threads (1 is enough for
    ///   well over a million small messages per second).
    public init(ioThreads: Int = 1) throws(ZMQError) {
        guard let handle = zmq_ctx_new() else { throw ZMQError.last("zmq_ctx_new") }
        self.handle = handle
        if zmq_ctx_set(handle, ZMQ_IO_THREADS, Int32(ioThreads)) != 0 {
            zmq_ctx_term(handle)
            throw ZMQError.last("zmq_ctx_set(ZMQ_IO_THREADS)")
        }
    }

    /// Makes every blocking call on this context's sockets fail with `ETERM`.
    ///
    /// Use it to wake a thread blocked in a receive or a poll during shutdown.
    public func shutdown() {
        zmq_ctx_shutdown(handle)
    }

    deinit {
        // Retried on EINTR: a signal must not leak the context.
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }

    /// The libzmq version this process is linked against, as `(major, minor, patch)`.
    public static var version: (major: Int, minor: Int, patch: Int) {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return (Int(major), Int(minor), Int(patch))
    }
}
