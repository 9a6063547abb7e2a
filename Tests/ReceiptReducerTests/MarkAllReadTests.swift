import EventBusCore
import Testing

@testable import ReceiptReducer

/// `notification.mark_all_read` (docs/events.md rule 12): every channel of the
/// user read to its latest message, a `message.read` to each channel whose
/// watermark moved (by cid), then one notification with the totals.
@Suite struct MarkAllReadTests {
    func channels() -> Script {
        var s = Script()
        s.create("messaging:b", ["ann", "bob"])
        s.create("messaging:a", ["ann", "bob"])
        s.create("messaging:c", ["ann", "bob"])
        s.create("messaging:empty", ["bob"])
        s.message("messaging:b", "b1", from: "ann")
        s.send(.messageNew(cid: "messaging:a", message: NewMessage(
            id: "a1", userID: "ann", createdAt: s.nextTime, mentionedUsers: ["bob"])))
        s.message("messaging:c", "c1", from: "ann")
        s.read("messaging:c", "bob", "c1")
        return s
    }

    @Test func readsEveryChannelThatMovesByCidThenNotifiesTheTotals() {
        var s = channels()
        #expect(s.reducer.unreadTotals(userID: "bob") == (2, 2))
        let time = s.nextTime
        let out = s.send(.notificationMarkAllRead(userID: "bob", readAt: nil))
        #expect(out.map { "\($0.subject)/\($0.type)" } == [
            "messaging:a/message.read", "messaging:b/message.read", "@bob/notification.mark_all_read",
        ])
        #expect(out[0].json["last_read_message_id"] == .string("a1"))
        #expect(out[0].json["last_read"] == .string(time))
        #expect(out[2].keys == ["user_id", "last_read", "unread_channels", "total_unread_count", "total_unread_mentions"])
        #expect(out[2].json["total_unread_count"] == num(0))
        #expect(s.reducer.unreadTotals(userID: "bob") == (0, 0))
        #expect(s.reducer.totalUnreadMentions(userID: "bob") == 0)
        #expect(s.reducer.deliveredWatermark(cid: "messaging:b", userID: "bob") == .some("b1"))
    }

    @Test func againOrForAStrangerItOnlyNotifies() {
        var s = channels()
        s.send(.notificationMarkAllRead(userID: "bob", readAt: "2026-11-22T00:00:09.000Z"))
        #expect(s.send(.notificationMarkAllRead(userID: "bob", readAt: nil)).map(\.type) == ["notification.mark_all_read"])
        let stranger = s.send(.notificationMarkAllRead(userID: "nobody", readAt: nil))
        #expect(stranger.map(\.subject) == ["@nobody"])
        #expect(stranger[0].json["unread_channels"] == num(0))
        #expect(s.reducer.userCount == 2)  // nobody was not interned
    }

    @Test func removedChannelsAreLeftAlone() {
        var s = channels()
        s.send(.memberRemoved(cid: "messaging:b", userID: "bob"))
        let out = s.send(.notificationMarkAllRead(userID: "bob", readAt: nil))
        #expect(out.map(\.subject) == ["messaging:a", "@bob"])
        #expect(s.reducer.readWatermark(cid: "messaging:b", userID: "bob") == .some(nil))
    }
}
