/// A snapshot in the store that cannot be read back.
public struct PluginStoreError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
