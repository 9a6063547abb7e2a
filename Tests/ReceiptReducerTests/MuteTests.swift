import EventBusCore
import Testing

@testable import ReceiptReducer

/// Muted channels and count preferences (docs/events.md rule 11): per channel
/// the counts stay; the totals take a muted or mentions-only channel's
/// mentions only, and nothing from a channel whose preference is off.
@Suite struct MuteTests {
    let team = "messaging:team"
    let other = "messaging:other"

    /// bob is in two channels: 2 unread in team (one mentions him), 1 in other.
    func channels() -> Script {
        var s = Script()
        s.create(team, ["ann", "bob"])
        s.create(other, ["ann", "bob"])
        s.message(team, "t1", from: "ann")
        s.send(.messageNew(cid: team, message: NewMessage(
            id: "t2", userID: "ann", createdAt: s.nextTime, mentionedUsers: ["bob"])))
        s.message(other, "o1", from: "ann")
        return s
    }

    func update(_ s: inout Script, _ cid: String, muted: Bool? = nil, count: CountPreference? = nil) -> [ReducerOutput] {
        s.send(.memberUpdated(cid: cid, userID: "bob", muted: muted, countUnread: count))
    }

    func totals(_ s: Script) -> [Int] {
        let (total, channels) = s.reducer.unreadTotals(userID: "bob")
        return [total, channels, s.reducer.totalUnreadMentions(userID: "bob")]
    }

    @Test func aMutedChannelAddsOnlyItsMentions() throws {
        var s = channels()
        #expect(totals(s) == [3, 2, 1])
        #expect(update(&s, team, muted: true).isEmpty)
        #expect(totals(s) == [2, 2, 1])  // team adds its 1 mention
        s.read(team, "bob", "t2")
        #expect(totals(s) == [1, 1, 0])
        let reply = try s.query("unread_counts", [("user_id", .string("bob"))])
        #expect(reply["total_unread_count"] == num(1))
        _ = update(&s, other, muted: true)
        #expect(totals(s) == [0, 0, 0])
        // Still listed per channel, marked muted.
        let muted = try s.query("unread_counts", [("user_id", .string("bob"))])
        guard case .array(let rows)? = muted["channels"] else { Issue.record("no channels"); return }
        #expect(rows.map { $0["cid"] } == [.string(other)])
        #expect(rows[0]["unread_messages"] == num(1))
        #expect(rows[0]["muted"] == .bool(true))
        _ = update(&s, other, muted: false)
        #expect(totals(s) == [1, 1, 0])
    }

    @Test func countPreferencesChooseWhatTheTotalsTake() {
        var s = channels()
        _ = update(&s, team, count: .mentions)
        #expect(totals(s) == [2, 2, 1])
        _ = update(&s, team, count: .off)
        #expect(totals(s) == [1, 1, 0])
        #expect(s.unread(team, "bob") == 2)  // per channel unchanged
        _ = update(&s, team, muted: true, count: .all)
        #expect(totals(s) == [2, 2, 1])  // muted: mentions only
        _ = update(&s, team, muted: false)
        #expect(totals(s) == [3, 2, 1])
    }

    @Test func notificationsCarryTheTotalsAfterSettings() {
        var s = channels()
        _ = update(&s, other, muted: true)
        let out = s.read(team, "bob", "t1")
        #expect(out[1].json["unread_messages"] == num(1))
        #expect(out[1].json["total_unread_count"] == num(1))  // t2; other is muted without mentions
        #expect(out[1].json["unread_channels"] == num(1))
    }

    @Test func settingsNeedAMemberAndKeepOverRemoval() {
        var s = channels()
        #expect(s.send(.memberUpdated(cid: "messaging:nowhere", userID: "bob", muted: true, countUnread: nil))
            .map { $0.json["reason"] } == [.string("unknown_channel")])
        #expect(s.send(.memberUpdated(cid: team, userID: "zed", muted: true, countUnread: nil))
            .map { $0.json["reason"] } == [.string("not_member")])
        _ = update(&s, team, muted: true)
        s.send(.memberRemoved(cid: team, userID: "bob"))
        s.send(.memberAdded(cid: team, userID: "bob"))
        #expect(totals(s) == [2, 2, 1])  // still muted
    }

    @Test func settingsSurviveASnapshotAndAreDefaultBeforeVersion4() throws {
        var s = channels()
        _ = update(&s, team, muted: true, count: .off)
        _ = update(&s, other, count: .mentions)
        let bytes = s.reducer.encodeSnapshot()
        let restored = try ReceiptReducer(snapshot: bytes)
        #expect(restored.encodeSnapshot() == bytes)
        #expect(restored.unreadTotals(userID: "bob") == (0, 0))
        var records = SnapshotVersionTests.records
        for i in records.indices { records[i].stamp = UInt64(i) }
        let old = try ReceiptReducer(snapshot: SnapshotVersionTests.snapshot(version: 3, records))
        #expect(old.channels[0].members.allSatisfy { !$0.muted && $0.countUnread == .all })
    }
}
