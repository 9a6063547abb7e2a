import EventBusCore

/// What a privacy filter withholds: read receipts or delivery receipts (docs/privacy.md "Rules").
public enum PrivacyPolicy: String, Sendable, CaseIterable {
    /// `read-privacy`: `message.read` events and read fields of replies.
    case read = "read-privacy"
    /// `delivery-privacy`: `message.delivered` events and delivery fields of replies.
    case delivery = "delivery-privacy"

    /// The filter's name: its plugin name and the `policy` of its audit records.
    public var name: String { rawValue }

    /// The egress event type the policy may suppress.
    public var eventType: EventType {
        switch self {
        case .read: .messageRead
        case .delivery: .messageDelivered
        }
    }

    /// The count of a receipt event the policy redacts (docs/events.md rule 26).
    public var countKey: String {
        switch self {
        case .read: "read_count"
        case .delivery: "delivered_count"
        }
    }

    /// The policy's token in a reply's `applied` list and view keys.
    public var token: String {
        switch self {
        case .read: "read"
        case .delivery: "delivery"
        }
    }

    /// The setting flag the policy reads.
    var flag: ReceiptFlags {
        switch self {
        case .read: .readOff
        case .delivery: .deliveryOff
        }
    }
}

/// Why a receipt was suppressed: the `reason` of a `receipt.suppressed` record.
public enum SuppressionReason: String, Sendable, CaseIterable {
    /// The user turned the receipts off (`user.updated`).
    case userSetting = "user_setting"
    /// The channel's type turned the events off (`channel_type.updated`).
    case channelType = "channel_type"
}
