/// Which receipts a user, or a channel type, withholds; empty (the default) shares everything.
public struct ReceiptFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8

    /// Creates flags from their bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Read receipts are off (`read_receipts.enabled = false`, or `read_events = false`).
    public static let readOff = ReceiptFlags(rawValue: 1)
    /// Delivery receipts are off (`delivery_receipts.enabled = false`, or `delivery_events = false`).
    public static let deliveryOff = ReceiptFlags(rawValue: 2)

    /// These flags after an update where `nil` keeps a value and `true` means enabled.
    public func updated(read: Bool?, delivery: Bool?) -> ReceiptFlags {
        var next = self
        if let read { if read { next.remove(.readOff) } else { next.insert(.readOff) } }
        if let delivery { if delivery { next.remove(.deliveryOff) } else { next.insert(.deliveryOff) } }
        return next
    }
}
