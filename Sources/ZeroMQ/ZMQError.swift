import CZeroMQ

/// An error reported by libzmq, with the operation that failed.
///
/// libzmq reports failures through `errno`; this type captures the number at the
/// point of failure together with a short name of the call, so that a log line
/// says what went wrong and where.
public struct ZMQError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The `errno` value libzmq reported.
    public let code: Int32
    /// The libzmq call or wrapper operation that failed, such as `zmq_bind`.
    public let operation: String

    /// Creates an error for `operation` with an explicit `errno` value.
    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// Captures the current `zmq_errno()` for `operation`.
    static func last(_ operation: String) -> ZMQError {
        ZMQError(code: zmq_errno(), operation: operation)
    }

    /// `true` when the call would have blocked (`EAGAIN`).
    public var wouldBlock: Bool { code == EAGAIN }
    /// `true` when the context was terminated (`ETERM`).
    public var contextTerminated: Bool { code == ETERM }
    /// `true` when a signal interrupted the call (`EINTR`).
    public var interrupted: Bool { code == EINTR }

    /// libzmq's sentence for the error number.
    public var message: String { String(cString: zmq_strerror(code)) }

    public var description: String { "\(operation): \(message) (errno \(code))" }
}
