/// Why the metrics endpoint could not be set up.
public struct MetricsServerError: Error, Sendable, CustomStringConvertible {
    /// A sentence naming the option or system call that failed.
    public let description: String

    /// An error with a sentence saying what went wrong.
    public init(_ description: String) { self.description = description }
}
