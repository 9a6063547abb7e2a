import EventBusCore
import ReceiptReducer
import Testing

/// A channel's and a user's life (docs/events.md rules 20–23), one scenario
/// per test: truncation, hiding, deletion, users who leave for good, bans,
/// and the count notifications each sends (rule 21).
@Suite struct ChannelLifeTests {
    let cid = "messaging:life"

    /// ann, bob, cat; ann posts m1–m3, cat posts c1; bob has read m1.
    func channel() -> Script {
        var s = Script()
        s.create(cid, ["ann", "bob", "cat"])
        for id in ["m1", "m2", "m3"] { s.message(cid, id, from: "ann") }
        s.message(cid, "c1", from: "cat")
        s.read(cid, "bob", "m1")
        return s
    }

    /// `subject type` of each output, to compare sequences at a glance.
    func kinds(_ outputs: [ReducerOutput]) -> [String] { outputs.map { "\($0.subject) \($0.type)" } }

    // MARK: Truncation

    @Test func aTruncatedHistoryIsGoneForEveryoneAndTheCountsFollow() throws {
        var s = channel()
        #expect(s.unread(cid, "bob") == 3)
        let out = s.send(.channelTruncated(cid: cid, messageID: "m2"))
        // bob had m2 unread, cat had m1–m3: both hear their new counts; ann's did not change.
        #expect(kinds(out) == ["@bob notification.channel_truncated", "@cat notification.channel_truncated"])
        #expect(out[0].json["unread_messages"] == num(2))
        #expect(s.unread(cid, "bob") == 2)
        #expect(s.unread(cid, "cat") == 1)
        // Gone by id: acks, deletions and receipts of m1–m2 are unknown; bob's watermark names no message.
        #expect(s.read(cid, "cat", "m2").first?.json["reason"] == .string("unknown_message"))
        #expect(s.send(.messageDeleted(cid: cid, messageID: "m1")).first?.json["reason"] == .string("unknown_message"))
        #expect(s.queryError("message_receipts", .object([
            (key: "cid", value: .string(cid)), (key: "message_id", value: .string("m1")), (key: "viewer", value: .string("ann")),
        ]))?.code == "not_found")
        #expect(s.reducer.readWatermark(cid: cid, userID: "bob") == .some(nil))
        // What is left counts as before, and its id can be reused by a new message.
        #expect(s.read(cid, "bob", "m3").map(\.type) == ["message.read", "notification.mark_read"])
        s.message(cid, "m1", from: "ann")
        #expect(s.unread(cid, "bob") == 2)  // c1 and the new m1
        #expect(try ReceiptReducer(snapshot: s.reducer.encodeSnapshot()).encodeSnapshot() == s.reducer.encodeSnapshot())
    }

    @Test func aTruncationWithoutAMessageTakesEverything() {
        var s = channel()
        // ann had c1 unread, bob m2–c1, cat m1–m3: all three hear it.
        #expect(s.send(.channelTruncated(cid: cid, messageID: nil)).map(\.subject) == ["@ann", "@bob", "@cat"])
        #expect(s.unread(cid, "bob") == 0)
        #expect(s.unread(cid, "cat") == 0)
        #expect(s.send(.channelTruncated(cid: cid, messageID: nil)).isEmpty)  // nothing left to take
        #expect(s.send(.channelTruncated(cid: "messaging:nowhere", messageID: nil)).first?.json["reason"]
            == .string("unknown_channel"))
    }

    @Test func aThreadGoesWithItsParent() throws {
        var s = channel()
        s.send(.messageNew(cid: cid, message: NewMessage(id: "r1", userID: "bob", createdAt: s.nextTime, parentID: "m2")))
        s.message(cid, "m4", from: "ann")
        s.send(.messageNew(cid: cid, message: NewMessage(id: "r2", userID: "cat", createdAt: s.nextTime, parentID: "m2")))
        s.send(.channelTruncated(cid: cid, messageID: "m3"))
        // r2 came after m3 but is in m2's thread: it went too.
        #expect(s.read(cid, "bob", "r2").first?.json["reason"] == .string("unknown_message"))
        let counts = try s.query("unread_counts", [("user_id", .string("bob"))])
        #expect(counts["unread_threads"] == num(0))
        #expect(s.unread(cid, "bob") == 2)  // c1 and m4
    }

    // MARK: Hiding

    @Test func aHiddenChannelHasNoUnreadUntilANewMessage() throws {
        var s = channel()
        let out = s.send(.channelHidden(cid: cid, userID: "bob", clearHistory: false))
        #expect(kinds(out) == ["@bob notification.channel_hidden"])
        #expect(out[0].json["unread_messages"] == num(0))
        #expect(out[0].json["total_unread_count"] == num(0))
        #expect(s.unread(cid, "bob") == 0)
        #expect(s.reducer.unreadTotals(userID: "bob") == (0, 0))
        #expect(s.send(.channelHidden(cid: cid, userID: "bob", clearHistory: false)).isEmpty)  // already hidden
        // Nobody else sees anything: his public watermark is where it was.
        #expect(s.reducer.readWatermark(cid: cid, userID: "bob") == .some("m1"))
        // The next channel message shows it again, with the history unread (no clear_history).
        s.message(cid, "m4", from: "ann")
        #expect(s.unread(cid, "bob") == 4)
    }

    @Test func clearingTheHistoryReadsItPrivately() {
        var s = channel()
        let out = s.send(.channelHidden(cid: cid, userID: "bob", clearHistory: true))
        // No message.read to the channel: the read is his own (rule 18).
        #expect(kinds(out) == ["@bob notification.channel_hidden"])
        #expect(s.reducer.readWatermark(cid: cid, userID: "bob") == .some("m1"))
        #expect(s.reducer.ownReadWatermark(cid: cid, userID: "bob") == .some("c1"))
        let shown = s.send(.channelVisible(cid: cid, userID: "bob"))
        #expect(kinds(shown) == ["@bob notification.channel_visible"])
        #expect(shown[0].json["unread_messages"] == num(0))
        #expect(s.send(.channelVisible(cid: cid, userID: "bob")).isEmpty)  // not hidden
        s.message(cid, "m4", from: "ann")
        #expect(s.unread(cid, "bob") == 1)
    }

    @Test func onlyAMemberHidesAChannel() {
        var s = channel()
        #expect(s.send(.channelHidden(cid: cid, userID: "zed", clearHistory: false)).first?.json["reason"]
            == .string("not_member"))
        #expect(s.send(.channelVisible(cid: "messaging:nowhere", userID: "bob")).first?.json["reason"]
            == .string("unknown_channel"))
    }

    // MARK: Deletion

    @Test func aDeletedChannelGoesWithItsTotalsAndItsCidComesBackAfresh() throws {
        var s = channel()
        s.create("messaging:other", ["bob", "ann"])
        s.message("messaging:other", "o1", from: "ann")
        #expect(s.reducer.unreadTotals(userID: "bob") == (4, 2))
        let out = s.send(.channelDeleted(cid: cid))
        #expect(kinds(out) == [
            "@ann notification.channel_deleted", "@bob notification.channel_deleted", "@cat notification.channel_deleted",
        ])
        #expect(out[1].keys == ["cid", "user_id", "unread_channels", "total_unread_count", "total_unread_mentions"])
        #expect(out[1].json["total_unread_count"] == num(1))
        #expect(s.reducer.unreadTotals(userID: "bob") == (1, 1))
        #expect(s.reducer.members(of: cid) == nil)
        #expect(s.read(cid, "bob", "m2").first?.json["reason"] == .string("unknown_channel"))
        // Created again: a new channel, nothing of the old one.
        s.create(cid, ["dan"])
        #expect(s.reducer.members(of: cid) == ["dan"])
        #expect(s.reducer.messageCount(of: cid) == 0)
        let bytes = s.reducer.encodeSnapshot()
        let restored = try ReceiptReducer(snapshot: bytes)
        #expect(restored.encodeSnapshot() == bytes)
        #expect(restored.members(of: cid) == ["dan"])
    }

    @Test func aDeletedMessageTellsEachMemberItWasUnreadFor() {
        var s = channel()
        s.read(cid, "cat", "m3")
        let out = s.send(.messageDeleted(cid: cid, messageID: "m2"))
        // bob had not read m2; cat had; ann sent it.
        #expect(kinds(out) == ["\(cid) message.deleted", "@bob notification.message_deleted"])
        #expect(out[1].keys == [
            "cid", "user_id", "message_id", "unread_messages", "unread_mentions", "unread_channels", "total_unread_count",
            "total_unread_mentions",
        ])
        #expect(out[1].json["unread_messages"] == num(2))
    }

    // MARK: Membership

    @Test func addedAndRemovedMembersHearTheirTotals() {
        var s = channel()
        let added = s.send(.memberAdded(cid: cid, userID: "dan"))
        #expect(kinds(added) == ["@dan notification.added_to_channel"])
        #expect(added[0].json["unread_messages"] == num(0))
        let removed = s.send(.memberRemoved(cid: cid, userID: "bob"))
        #expect(kinds(removed) == ["@bob notification.removed_from_channel"])
        #expect(removed[0].json["total_unread_count"] == num(0))
    }

    // MARK: Users who leave for good

    @Test func aSoftDeletedUserLeavesEveryChannelAndResumesIfAddedBack() {
        var s = channel()
        s.create("messaging:other", ["bob"])
        #expect(s.send(.userDeleted(userID: "bob", hard: false)).isEmpty)  // nobody else's counts change
        #expect(s.reducer.members(of: cid) == ["ann", "cat"])
        #expect(s.reducer.members(of: "messaging:other") == [])
        #expect(s.read(cid, "bob", "m2").first?.json["reason"] == .string("not_member"))
        s.send(.memberAdded(cid: cid, userID: "bob"))
        #expect(s.reducer.readWatermark(cid: cid, userID: "bob") == .some("m1"))
    }

    @Test func aHardDeletedUserIsErasedAndTheirMessagesStopCounting() throws {
        var s = channel()
        s.read(cid, "bob", "m3")
        let out = s.send(.userDeleted(userID: "cat", hard: true))
        // c1 was unread for ann and bob: each hears their new counts, naming cat.
        #expect(kinds(out) == ["@ann notification.user_deleted", "@bob notification.user_deleted"])
        #expect(out[1].json["deleted_user_id"] == .string("cat"))
        #expect(out[1].json["unread_messages"] == num(0))
        #expect(s.reducer.readWatermark(cid: cid, userID: "cat") == nil)  // erased
        // Added back, cat starts as a new member: nothing of the history is unread.
        s.send(.memberAdded(cid: cid, userID: "cat"))
        #expect(s.unread(cid, "cat") == 0)
        #expect(s.reducer.readWatermark(cid: cid, userID: "cat") == .some("c1"))
        #expect(try ReceiptReducer(snapshot: s.reducer.encodeSnapshot()).encodeSnapshot() == s.reducer.encodeSnapshot())
    }

    @Test func aHardDeleteErasesTheRecordsOfChannelsTheUserHadLeftToo() {
        var s = channel()
        s.create("messaging:old", ["bob", "ann"])
        s.message("messaging:old", "o1", from: "ann")
        s.read("messaging:old", "bob", "o1")
        s.send(.memberRemoved(cid: "messaging:old", userID: "bob"))
        #expect(s.reducer.readWatermark(cid: "messaging:old", userID: "bob") == .some("o1"))  // kept after leaving
        s.send(.userDeleted(userID: "bob", hard: true))
        #expect(s.reducer.readWatermark(cid: "messaging:old", userID: "bob") == nil)
        #expect(s.reducer.readWatermark(cid: cid, userID: "bob") == nil)
    }

    @Test func deletingAnUnknownUserChangesNothing() {
        var s = channel()
        let before = s.reducer.encodeSnapshot()
        #expect(s.send(.userDeleted(userID: "nobody", hard: true)).isEmpty)
        #expect(s.reducer.encodeSnapshot() == before)
    }

    // MARK: Bans

    @Test func aBannedMembersAcksAreRejectedWithAReason() {
        var s = channel()
        #expect(s.send(.userBanned(userID: "bob", cid: cid)).isEmpty)
        #expect(s.read(cid, "bob", "m2").first?.json["reason"] == .string("banned"))
        #expect(s.delivered(cid, "bob", "m2").first?.json["reason"] == .string("banned"))
        #expect(s.markRead(cid, "bob").first?.json["reason"] == .string("banned"))
        // not_member comes first; unknown_message after.
        #expect(s.read(cid, "bob", "m404").first?.json["reason"] == .string("banned"))
        #expect(s.unread(cid, "bob") == 3)  // counts unchanged
        s.send(.userUnbanned(userID: "bob", cid: cid))
        #expect(s.read(cid, "bob", "m2").map(\.type) == ["message.read", "notification.mark_read"])
        #expect(s.reducer.rejectedCount(.banned) == 4)
    }

    @Test func aBanEverywhereHoldsInEveryChannelAndMarkAllReadPassesThemBy() throws {
        var s = channel()
        s.create("messaging:other", ["bob", "ann"])
        s.message("messaging:other", "o1", from: "ann")
        s.send(.userBanned(userID: "bob", cid: nil))
        #expect(s.read("messaging:other", "bob", "o1").first?.json["reason"] == .string("banned"))
        let all = s.send(.notificationMarkAllRead(userID: "bob", readAt: nil))
        #expect(kinds(all) == ["@bob notification.mark_all_read"])
        #expect(all[0].json["total_unread_count"] == num(4))
        // A channel's unban does not lift the ban everywhere.
        s.send(.userUnbanned(userID: "bob", cid: cid))
        #expect(s.read(cid, "bob", "m2").first?.json["reason"] == .string("banned"))
        let bytes = s.reducer.encodeSnapshot()
        let restored = try ReceiptReducer(snapshot: bytes)
        #expect(restored.encodeSnapshot() == bytes)
        s.send(.userUnbanned(userID: "bob", cid: nil))
        #expect(s.read(cid, "bob", "m2").first?.type == "message.read")
    }

    @Test func aChannelBanNeedsTheChannel() {
        var s = channel()
        #expect(s.send(.userBanned(userID: "bob", cid: "messaging:nowhere")).first?.json["reason"]
            == .string("unknown_channel"))
    }
}
