/// An error of the plugin runtime, with a sentence saying what went wrong.
public struct PluginError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
