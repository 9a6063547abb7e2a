/// One output event: to stage `out` or `diag`, with its type, subject and data (a JSON object, as bytes).
public struct ReducerOutput: Sendable, Equatable, CustomStringConvertible {
    /// `out` or `diag`.
    public let stage: String
    /// The event type, for example `message.read` or `receipt.rejected`.
    public let type: String
    /// The subject: a `cid` for channel events, `@<user_id>` for a user's own events.
    public let subject: String
    /// The `data` object as compact JSON bytes.
    public let data: [UInt8]

    /// Creates an output.
    public init(stage: String, type: String, subject: String, data: [UInt8]) {
        self.stage = stage
        self.type = type
        self.subject = subject
        self.data = data
    }

    /// `stage/subject/type data`, for test messages.
    public var description: String {
        "\(stage)/\(subject)/\(type) \(String(decoding: data, as: UTF8.self))"
    }
}
