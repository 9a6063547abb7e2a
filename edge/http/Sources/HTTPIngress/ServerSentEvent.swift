/// One message of a `text/event-stream` (the WHATWG HTML standard, "Server-sent events"):
/// an event with its `id:`, `event:` and `data:` lines, or a comment line, which clients
/// ignore and proxies see as traffic (the heartbeat). Each ends with the blank line that
/// dispatches it.
public struct ServerSentEvent: Sendable, Equatable {
    /// The `id:` field: the client's last event ID, sent back as `Last-Event-ID`.
    public var id: String?
    /// The `event:` field, the type a browser's `addEventListener` listens for.
    public var event: String?
    /// The `data:` field, on one line.
    public var data: [UInt8]
    /// A comment, `: text`, sent instead of an event when set.
    public var comment: String?

    /// The media type of a stream.
    public static let mediaType = "text/event-stream"

    /// An event; `data` is put on one line (CR and LF, JSON whitespace, become spaces).
    public init(id: String? = nil, event: String? = nil, data: [UInt8]) {
        self.id = id
        self.event = event
        self.data = Self.oneLine(data)
        self.comment = nil
    }

    /// A comment line (a heartbeat); line breaks in `text` become spaces.
    public static func comment(_ text: String) -> ServerSentEvent {
        var message = ServerSentEvent(data: [])
        message.comment = text
        return message
    }

    /// The message as it goes on the wire: its lines, then a blank line.
    public var bytes: [UInt8] {
        if let comment { return Array(": ".utf8) + Self.oneLine(Array(comment.utf8)) + Array("\n\n".utf8) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count + 64)
        if let id { bytes += Array("id: ".utf8) + Self.oneLine(Array(id.utf8)) + [0x0A] }
        if let event { bytes += Array("event: ".utf8) + Self.oneLine(Array(event.utf8)) + [0x0A] }
        bytes += Array("data: ".utf8)
        bytes += data
        bytes += Array("\n\n".utf8)
        return bytes
    }

    /// The bytes with CR and LF as spaces: a field's value ends at the first of them.
    private static func oneLine(_ bytes: [UInt8]) -> [UInt8] {
        bytes.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 }
    }
}
