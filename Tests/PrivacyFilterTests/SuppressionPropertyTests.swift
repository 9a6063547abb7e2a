import EventBus
import PrivacyFilter
import ReceiptReducer
import Testing

@Suite struct SuppressionPropertyTests {
    /// For random settings and acks (seeded), no receipt of a user or channel
    /// type whose setting was off at that point reaches `out` or moves what
    /// others see (docs/events.md rule 19), every receipt with settings on
    /// does, and every self-addressed notification does.
    @Test(arguments: 0..<20)
    func noReceiptWithItsSettingOffEverReachesOutAndEveryNotificationDoes(seed: Int) throws {
        var rng = SplitMix64(seed: UInt64(seed) &* 7919 &+ 1)
        var d = FilterDriver([PrivacyFilter(policy: .read), PrivacyFilter(policy: .delivery)])
        let users = ["ann", "bob", "cat", "dan"]
        let cids = ["team:a", "dm:b"]
        var userOff: [String: (read: Bool, delivery: Bool)] = [:]
        var typeOff: [String: (read: Bool, delivery: Bool)] = [:]
        for cid in cids { try d.send(.channelCreated(cid: cid, members: users)) }
        var n = 0
        for _ in 0..<300 {
            let cid = cids[rng.below(2)]
            let user = users[rng.below(4)]
            let type = String(cid.prefix { $0 != ":" })
            let before = d.reducer.readWatermark(cid: cid, userID: user)
            let ownBefore = d.reducer.ownReadWatermark(cid: cid, userID: user)
            let beforeDelivered = d.reducer.deliveredWatermark(cid: cid, userID: user)
            var reached: [(topic: String, bytes: [UInt8])] = []
            let kind = rng.below(7)
            switch kind {
            case 0:
                let read: Bool? = rng.below(2) == 0 ? nil : rng.below(2) == 0
                let delivery: Bool? = rng.below(2) == 0 ? nil : rng.below(2) == 0
                try d.send(.userUpdated(userID: user, deliveryReceipts: delivery, readReceipts: read))
                var s = userOff[user] ?? (false, false)
                if let read { s.read = !read }
                if let delivery { s.delivery = !delivery }
                userOff[user] = s
                continue
            case 1:
                let read: Bool? = rng.below(3) == 0 ? nil : rng.below(3) != 0
                let delivery = rng.below(3) != 0
                try d.send(.channelTypeUpdated(name: type, deliveryEvents: delivery, readEvents: read))
                var s = typeOff[type] ?? (false, false)
                if let read { s.read = !read }
                s.delivery = !delivery
                typeOff[type] = s
                continue
            case 2:
                n += 1
                try d.send(.messageNew(cid: cid, message: message("m\(n)", from: users[rng.below(4)])))
                continue
            case 3:
                reached = try d.send(.messageDelivered(cid: cid, userID: user, messageID: "m\(max(1, n - rng.below(3)))", deliveredAt: nil))
            case 4:
                reached = try d.send(.notificationMarkRead(cid: cid, userID: user, readAt: nil))
            default:
                reached = try d.send(.messageRead(cid: cid, userID: user, messageID: "m\(max(1, n - rng.below(3)))", readAt: nil))
            }
            let readMoved = d.reducer.readWatermark(cid: cid, userID: user) != before
            let ownReadMoved = d.reducer.ownReadWatermark(cid: cid, userID: user) != ownBefore
            let deliveryAckMoved = kind == 3 && d.reducer.deliveredWatermark(cid: cid, userID: user) != beforeDelivered
            let readHidden = (userOff[user]?.read ?? false) || (typeOff[type]?.read ?? false)
            let deliveryHidden = (userOff[user]?.delivery ?? false) || (typeOff[type]?.delivery ?? false)
            let kinds = reached.kinds
            // What others see moves only with receipts shown, and exactly then reaches `out`.
            #expect(!(readMoved && readHidden) && !(deliveryAckMoved && deliveryHidden), "seed \(seed)")
            #expect(kinds.contains("\(cid)/message.read") == readMoved, "seed \(seed): \(kinds)")
            #expect(kinds.contains("\(cid)/message.delivered") == deliveryAckMoved, "seed \(seed): \(kinds)")
            #expect(kinds.contains("@\(user)/notification.mark_read") == ownReadMoved, "seed \(seed): \(kinds)")
        }
    }
}
