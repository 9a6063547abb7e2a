import EventBusCore

/// One (channel, user) record: watermarks as message positions, times as codes.
///
/// 40 bytes: the two times, five 32-bit fields, and one word packing the
/// flags (a byte) with the record's place in its channel's ``HistoryStore``
/// (24 bits). Positions are indices in the channel's message sequence, -1 for
/// "before the first message"; times are ``TimeTable`` codes.
struct MemberState: Sendable {
    /// When the read watermark last moved.
    var readTime: Int64
    /// When the delivered watermark last moved.
    var deliveredTime: Int64
    /// The interned user.
    var user: UInt32
    /// The read watermark's position.
    var readPosition: Int32
    /// The delivered watermark's position (behind ``readPosition`` only when a read was
    /// shown while delivery receipts were hidden: docs/events.md rule 19).
    var deliveredPosition: Int32
    /// The channel's latest message when the member first joined, -1 if none:
    /// they count for the messages after it only (docs/events.md rule 8).
    var joinedAt: Int32
    /// ``readStamp``'s storage: 32 bits, renumbered by the channel before they
    /// run out (``ChannelState/takeReadStamp()``).
    private var stamp: UInt32
    /// The flags (low byte) and the history reference (high 24 bits).
    private var packed: UInt32 = 0

    init(
        user: UInt32, readPosition: Int32, deliveredPosition: Int32, isMember: Bool, muted: Bool = false,
        countUnread: CountPreference = .all, hidden: Bool = false, readTime: Int64, deliveredTime: Int64,
        joinedAt: Int32 = -1, erased: Bool = false, readStamp: Int64
    ) {
        self.readTime = readTime
        self.deliveredTime = deliveredTime
        self.user = user
        self.readPosition = readPosition
        self.deliveredPosition = deliveredPosition
        self.joinedAt = joinedAt
        stamp = UInt32(readStamp)
        self.isMember = isMember
        self.muted = muted
        self.countUnread = countUnread
        self.hidden = hidden
        self.erased = erased
    }

    private static let memberBit: UInt32 = 1
    private static let mutedBit: UInt32 = 2
    private static let hiddenBit: UInt32 = 4
    private static let erasedBit: UInt32 = 8
    private static let preferenceShift: UInt32 = 4
    private static let preferenceMask: UInt32 = 3 << 4
    private static let historyShift: UInt32 = 8

    private func bit(_ mask: UInt32) -> Bool { packed & mask != 0 }
    private mutating func set(_ mask: UInt32, _ value: Bool) {
        if value { packed |= mask } else { packed &= ~mask }
    }

    /// Whether the user is a member now (a removed member's record is kept).
    var isMember: Bool {
        get { bit(Self.memberBit) }
        set { set(Self.memberBit, newValue) }
    }
    /// Whether the member muted the channel (`member.updated`).
    var muted: Bool {
        get { bit(Self.mutedBit) }
        set { set(Self.mutedBit, newValue) }
    }
    /// Whether the member hid the channel (`channel.hidden`): nothing of it is
    /// unread for them until `channel.visible` or the next channel message.
    var hidden: Bool {
        get { bit(Self.hiddenBit) }
        set { set(Self.hiddenBit, newValue) }
    }
    /// Whether the record was erased (`user.deleted` with `hard_delete`): it
    /// counts in nothing, and a member added again starts as a new member.
    var erased: Bool {
        get { bit(Self.erasedBit) }
        set { set(Self.erasedBit, newValue) }
    }
    /// What the channel adds to the member's totals (`member.updated`).
    var countUnread: CountPreference {
        get {
            switch (packed & Self.preferenceMask) >> Self.preferenceShift {
            case 1: .mentions
            case 2: .off
            default: .all
            }
        }
        set {
            let code: UInt32 = switch newValue {
            case .all: 0
            case .mentions: 1
            case .off: 2
            }
            packed = packed & ~Self.preferenceMask | code << Self.preferenceShift
        }
    }
    /// The channel's read stamp of the read watermark's last move (or of the
    /// join that set it): unique in the channel, increasing in the order the
    /// reducer applied the moves. Orders readers whose ``readTime`` is equal.
    var readStamp: Int64 {
        get { Int64(stamp) }
        set { stamp = UInt32(newValue) }
    }
    /// Where the record's crossings are kept in its channel's ``HistoryStore``,
    /// ``HistoryStore/Reference/none`` when the record implies them.
    var history: HistoryStore.Reference {
        get { HistoryStore.Reference(rawValue: packed >> Self.historyShift) }
        set { packed = packed & 0xFF | newValue.rawValue << Self.historyShift }
    }
}

extension MemberState: Equatable {
    /// Records are equal when everything but their place in a ``HistoryStore`` is.
    static func == (a: MemberState, b: MemberState) -> Bool {
        a.readTime == b.readTime && a.deliveredTime == b.deliveredTime && a.user == b.user
            && a.readPosition == b.readPosition && a.deliveredPosition == b.deliveredPosition
            && a.joinedAt == b.joinedAt && a.stamp == b.stamp && a.packed & 0xFF == b.packed & 0xFF
    }
}
