/// Why the metrics endpoint could not be set up.
public struct MetricsServerError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure it is.
    public enum Code: String, Sendable, Equatable {
        /// `--metrics` is malformed or not loopback: fix the option.
        case invalidAddress = "invalid_address"
        /// A system call failed (the port is taken, no socket could be made).
        case system
    }

    public let code: Code
    /// A sentence naming the option or system call that failed.
    public let description: String

    /// An error with its code and a sentence saying what went wrong.
    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
