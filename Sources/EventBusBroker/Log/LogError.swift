/// An error from the durable log or the offset store.
///
/// Match on ``kind``; ``message`` is a sentence for people that names the
/// file, offset or field at fault.
public struct LogError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in categories a caller can act on.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: Sendable, Hashable {
            case io
            case corrupt
            case invalidRecord
            case invalidArgument
            case closed
            case locked
            case recordsLost
        }

        private let code: Code

        private init(_ code: Code) { self.code = code }

        /// A system call failed (disk full, permission, I/O error). Nothing
        /// of the failed operation was kept; it can be retried, except a
        /// failed sync: the log must then be reopened (``SegmentLog/sync()``).
        public static let io = Kind(.io)
        /// Stored bytes failed a check (length, CRC32C, sequence) outside the
        /// tail that opening the log repairs.
        public static let corrupt = Kind(.corrupt)
        /// A record field is too long for the record format.
        public static let invalidRecord = Kind(.invalidRecord)
        /// An argument was out of range (for example an empty batch).
        public static let invalidArgument = Kind(.invalidArgument)
        /// The log was used after ``SegmentLog/close()``.
        public static let closed = Kind(.closed)
        /// Another process (a broker, `eventbus recover`) holds the data directory's lock.
        public static let locked = Kind(.locked)
        /// The log ends before what consumers or plugin snapshots have seen: records that
        /// were read are gone, and the broker refuses to serve until `eventbus recover` ran.
        public static let recordsLost = Kind(.recordsLost)

        /// The kind's name, such as `io` or `corrupt`.
        public var description: String {
            switch code {
            case .io: "io"
            case .corrupt: "corrupt"
            case .invalidRecord: "invalid_record"
            case .invalidArgument: "invalid_argument"
            case .closed: "closed"
            case .locked: "locked"
            case .recordsLost: "records_lost"
            }
        }
    }

    /// The category of the error.
    public let kind: Kind
    /// A human-readable sentence saying what failed and where.
    public let message: String
    /// The `errno` of the failed system call, for ``Kind/io`` errors.
    public let errno: Int32?

    /// Creates an error of `kind` with `message`.
    ///
    /// - Parameters:
    ///   - kind: The category.
    ///   - message: What failed and where.
    ///   - errno: The `errno` of a failed system call, if any.
    public init(_ kind: Kind, _ message: String, errno: Int32? = nil) {
        self.kind = kind
        self.message = message
        self.errno = errno
    }

    /// `kind: message`.
    public var description: String { "\(kind): \(message)" }
}
