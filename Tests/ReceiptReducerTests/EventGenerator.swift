import EventBusCore
import ReceiptReducer

/// Generates random but plausible ingress sequences: a few channels (one
/// never created), a few users, messages of every kind (thread replies,
/// some shown in the channel, some to unknown parents), acks for random
/// messages in any order, duplicates, membership churn, non-members and
/// unknown ids, and now and then a channel's or a user's life (truncation,
/// hiding, deletion, bans).
struct EventGenerator {
    static let channels = ["team:a", "team:b", "dm:c", "team:nowhere"]
    static let users = ["ann", "bob", "cat", "dan", "eve", "fox"]

    var rng: SplitMix64
    var seq: UInt64 = 0
    var clock = 0
    var nextMessage = 0
    /// Message ids sent per channel (including to channels that reject them).
    var sent: [String: [String]] = [:]

    /// Whether it makes life events (``someLifeEvent()``); the paging
    /// properties, which follow one message's readers, leave them out.
    var lifeEvents = true

    init(seed: UInt64, lifeEvents: Bool = true) {
        rng = SplitMix64(seed: seed)
        self.lifeEvents = lifeEvents
    }

    static func time(_ millis: Int) -> String {
        func pad(_ v: Int, _ w: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, w - s.count)) + s
        }
        let s = millis / 1000
        return "2026-11-22T\(pad(s / 3600 % 24, 2)):\(pad(s / 60 % 60, 2)):\(pad(s % 60, 2)).\(pad(millis % 1000, 3))Z"
    }

    mutating func pick<T>(_ items: [T]) -> T { items[rng.below(items.count)] }

    mutating func someUser() -> String { rng.chance(3) ? "zed" : pick(Self.users) }

    mutating func someChannel() -> String {
        rng.chance(5) ? "team:nowhere" : pick(Array(Self.channels.prefix(3)))
    }

    mutating func someMessage(_ cid: String) -> String {
        if rng.chance(6) { return "m-unknown" }
        let ids = sent[cid] ?? []
        if ids.isEmpty || rng.chance(4) { return "m\(rng.below(max(nextMessage, 1)))" }
        // Favour recent messages, but reach back anywhere.
        return rng.chance(50) ? ids[max(0, ids.count - 1 - rng.below(4))] : pick(ids)
    }

    mutating func someAt() -> String? {
        rng.chance(25) ? Self.time(max(0, clock - rng.below(5000))) : nil
    }

    mutating func next() -> ReducerInput {
        seq += 1
        clock += 1 + rng.below(3000)
        let time: String? = rng.chance(3) ? nil : Self.time(clock)
        let payload: IngressPayload
        if rng.chance(3) {
            return ReducerInput(seq: seq, time: time, payload: .notificationMarkAllRead(userID: someUser(), readAt: someAt()))
        }
        if lifeEvents && rng.chance(4) {
            return ReducerInput(seq: seq, time: time, payload: someLifeEvent())
        }
        if rng.chance(6) {
            let preference: CountPreference? = rng.chance(40) ? nil : pick(CountPreference.allCases)
            payload = .memberUpdated(
                cid: someChannel(), userID: someUser(), muted: rng.chance(40) ? nil : rng.chance(50), countUnread: preference)
            return ReducerInput(seq: seq, time: time, payload: payload)
        }
        let roll = rng.below(100)
        switch roll {
        case 0..<8:
            let members = (0..<rng.below(5)).map { _ in someUser() }
            payload = .channelCreated(cid: pick(Array(Self.channels.prefix(3))), members: members)
        case 8..<16:
            payload = .memberAdded(cid: someChannel(), userID: someUser())
        case 16..<21:
            payload = .memberRemoved(cid: someChannel(), userID: someUser())
        case 21..<45:
            let cid = someChannel()
            let id: String
            if rng.chance(5), let old = sent[cid]?.last {
                id = old
            } else {
                id = "m\(nextMessage)"
                nextMessage += 1
            }
            sent[cid, default: []].append(id)
            let message = NewMessage(
                id: id, userID: someUser(), createdAt: Self.time(clock), kind: rng.chance(12) ? .system : .regular,
                silent: rng.chance(10),
                mentionedUsers: rng.chance(35) ? (0..<(1 + rng.below(3))).map { _ in someUser() } : [],
                parentID: rng.chance(30) ? someMessage(cid) : nil, showInChannel: rng.chance(30))
            payload = .messageNew(cid: cid, message: message)
        case 45..<49:
            let cid = someChannel()
            payload = .messageDeleted(cid: cid, messageID: someMessage(cid))
        case 49..<62:
            let cid = someChannel()
            payload = .messageDelivered(cid: cid, userID: someUser(), messageID: someMessage(cid), deliveredAt: someAt())
        case 62..<78:
            let cid = someChannel()
            payload = .messageRead(cid: cid, userID: someUser(), messageID: someMessage(cid), readAt: someAt())
        case 78..<86:
            payload = .notificationMarkRead(cid: someChannel(), userID: someUser(), readAt: someAt())
        case 86..<97:
            let cid = someChannel()
            payload = .notificationMarkUnread(cid: cid, userID: someUser(), messageID: someMessage(cid))
        case 97..<99:
            payload = .userUpdated(
                userID: someUser(), deliveryReceipts: rng.chance(30) ? nil : rng.chance(50),
                readReceipts: rng.chance(30) ? nil : rng.chance(50))
        default:
            payload = .channelTypeUpdated(
                name: rng.chance(50) ? "team" : "dm", deliveryEvents: rng.chance(30) ? nil : rng.chance(75),
                readEvents: rng.chance(30) ? nil : rng.chance(75))
        }
        return ReducerInput(seq: seq, time: time, payload: payload)
    }

    /// A truncation, a hide or show, a channel or user deleted, a ban or unban (rules 20–23).
    mutating func someLifeEvent() -> IngressPayload {
        switch rng.below(100) {
        case 0..<12:
            let cid = someChannel()
            return .channelTruncated(cid: cid, messageID: rng.chance(70) ? someMessage(cid) : nil)
        case 12..<42:
            return .channelHidden(cid: someChannel(), userID: someUser(), clearHistory: rng.chance(40))
        case 42..<62:
            return .channelVisible(cid: someChannel(), userID: someUser())
        case 62..<67:
            return .channelDeleted(cid: someChannel())
        case 67..<77:
            return .userDeleted(userID: someUser(), hard: rng.chance(50))
        case 77..<89:
            return .userBanned(userID: someUser(), cid: rng.chance(70) ? someChannel() : nil)
        default:
            return .userUnbanned(userID: someUser(), cid: rng.chance(70) ? someChannel() : nil)
        }
    }
}
