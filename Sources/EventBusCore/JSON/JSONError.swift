/// Why a byte sequence is not a JSON text, and where.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The offset, in bytes from the start of the input, of the first byte at fault.
    public let offset: Int
    /// What is wrong there, for example `unexpected character 'x'`.
    public let message: String

    /// Creates an error at byte `offset`.
    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    /// `at byte N: message`.
    public var description: String { "at byte \(offset): \(message)" }
}
