/// Which members a `message_receipts` list names (param `list`, docs/events.md
/// "message_receipts"): among the current members other than the sender, those
/// whose read or delivered watermark is at or after the message, or is not.
public enum ReceiptList: String, Sendable, CaseIterable {
    /// Read it: `{user_id, read_at}`.
    case read
    /// It reached a device of theirs: `{user_id, delivered_at}`.
    case delivered
    /// Have not read it: `{user_id}`.
    case unread
    /// It has not reached any device of theirs: `{user_id}`.
    case undelivered

    /// Whether the list is about the read watermark (else the delivered one).
    var isRead: Bool { self == .read || self == .unread }

    /// Whether the list names the members whose watermark passed the message.
    var passed: Bool { self == .read || self == .delivered }

    /// The key of the entries' time, for the lists that give one.
    var timeKey: String? {
        switch self {
        case .read: "read_at"
        case .delivered: "delivered_at"
        case .unread, .undelivered: nil
        }
    }
}
