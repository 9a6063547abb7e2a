/// An error the bus reported, or that the client library detected, with its wire code.
///
/// The code is one of the protocol's error codes; the message is the broker's
/// sentence naming the frame, event index or field at fault.
public struct BusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The protocol error code.
    public let code: ErrorCode
    /// A human-readable sentence naming what was wrong.
    public let message: String

    /// Creates an error with `code` and `message`.
    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.wire): \(message)" }
}
