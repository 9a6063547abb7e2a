/// Why a snapshot could not be decoded.
public struct SnapshotError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong and where.
    public let message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
