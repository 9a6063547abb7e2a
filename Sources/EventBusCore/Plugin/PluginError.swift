/// An error of the plugin runtime, with a sentence saying what went wrong and a ``Kind``
/// that decides the exit status (`PluginMain`: 2 for ``Kind/usage``, 1 otherwise).
public struct PluginError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure it is.
    public enum Kind: Sendable, Equatable {
        /// The plugin was started wrong (an unknown option, a value out of range, bad keys
        /// in the environment): fix the command line or the environment.
        case usage
        /// Anything else: the broker refused output, a store failed, the plugin threw.
        case runtime
    }

    public let kind: Kind
    public let description: String

    /// Creates an error of `kind` (``Kind/runtime`` by default).
    public init(_ description: String, kind: Kind = .runtime) {
        self.kind = kind
        self.description = description
    }
}
