/// Why an event was refused: the wire error code and a sentence naming the field at fault.
///
/// For example `bad_event` with `data.user_id: must match [A-Za-z0-9_!.@-]{1,128}`.
public struct EventValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `.badJSON`, `.badEvent` or `.unknownType`.
    public let code: ErrorCode
    /// A sentence that starts with the field's path, such as `data.message.id: …`.
    public let message: String

    /// Creates an error.
    public init(code: ErrorCode, message: String) {
        self.code = code
        self.message = message
    }

    /// The same error as a ``BusError``, ready for an `ERR` reply.
    public var busError: BusError { BusError(code, message) }

    /// `code: message`.
    public var description: String { "\(code.wire): \(message)" }
}
