/// Which receipts a user, or a channel type, withholds (docs/privacy.md).
///
/// The empty set is the default: everything shared.
struct PrivacyFlags: OptionSet, Sendable, Hashable {
    let rawValue: UInt8

    /// Read receipts are off (`read_receipts.enabled = false`, or `read_events = false` for a type).
    static let readOff = PrivacyFlags(rawValue: 1)
    /// Delivery receipts are off (`delivery_receipts.enabled = false`, or `delivery_events = false`).
    static let deliveryOff = PrivacyFlags(rawValue: 2)

    /// These flags after an update where `nil` keeps a value and `true` means enabled.
    func updated(read: Bool?, delivery: Bool?) -> PrivacyFlags {
        var next = self
        if let read { if read { next.remove(.readOff) } else { next.insert(.readOff) } }
        if let delivery { if delivery { next.remove(.deliveryOff) } else { next.insert(.deliveryOff) } }
        return next
    }
}
