/// An invariant the fuzz target found broken, with the input that broke it.
public struct FuzzFailure: Error, Sendable, CustomStringConvertible {
    /// Which invariant, and how it broke.
    public let message: String
    /// The input, as the target received it.
    public let input: [UInt8]

    /// Creates a failure.
    public init(_ message: String, input: [UInt8]) {
        self.message = message
        self.input = input
    }

    /// The message and the input, escaped so that it can be pasted into a test.
    public var description: String {
        let shown = input.prefix(512).map { byte -> String in
            (0x20...0x7E).contains(byte) && byte != UInt8(ascii: "\\") ? String(UnicodeScalar(byte)) : "\\x" + String(byte, radix: 16)
        }.joined()
        return "\(message) — input (\(input.count) bytes): \(shown)"
    }
}
