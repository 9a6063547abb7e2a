import EventBus
import HTTPIngress
import Testing

/// Who sees which event of `out`, with membership followed in log order, without I/O.
@Suite struct StreamScopeTests {
    /// What a stream shows of a log (SEQ 1, 2, …) of `in/` and `out/` events, its reader of
    /// `in` keeping pace with its pump of `out`, as the session's two tasks do; the feed after.
    static func read(_ scope: StreamScope, _ log: [(topic: String, event: String)],
                     firstPlugin: String? = "receipt-reducer") -> (shown: [String], feed: MembershipFeedState<Int>) {
        var feed = MembershipFeedState<Int>(user: scope.user ?? "")
        var shown: [String] = []
        for (index, entry) in log.enumerated() {
            let seq = UInt64(index + 1), event = Array(entry.event.utf8)
            if entry.topic.hasPrefix(StreamScope.membershipStage) {
                if scope.readsMembership { #expect(feed.apply(type: String(entry.topic.split(separator: "/")[2]), event: event, seq: seq).isEmpty) }
                continue
            }
            switch scope.verdict(topic: entry.topic, event: event, firstPlugin: firstPlugin) {
            case .hidden: break
            case .shown: shown.append(entry.topic)
            case .ifMember(let cid, let cause):
                #expect(scope.readsMembership)
                if let cause { #expect(feed.wait(through: cause, index) == .answered(true), "the cause precedes its output") }
                if feed.contains(cid, at: cause) { shown.append(entry.topic) }
            }
        }
        return (shown, feed)
    }

    /// The topics a stream shows of `log`.
    static func take(_ scope: StreamScope, _ log: [(topic: String, event: String)], firstPlugin: String? = "receipt-reducer") -> [String] {
        read(scope, log, firstPlugin: firstPlugin).shown
    }

    static func membership(_ type: String, _ cid: String, _ data: String) -> (topic: String, event: String) {
        ("in/\(cid)/\(type)", Events.event("\(type)-\(cid)", type, subject: cid, data: data))
    }

    static func out(_ subject: String, _ type: String = "message.read") -> (topic: String, event: String) {
        ("out/\(subject)/\(type)", "{}")
    }

    /// An event of `out` as the pipeline's plugin `plugin` emits it for its input SEQ `cause`
    /// (the id and source ``PluginOutput`` gives it, docs/plugins.md).
    static func out(_ subject: String, _ type: String, causedAt cause: UInt64, by plugin: String = "receipt-reducer") -> (topic: String, event: String) {
        ("out/\(subject)/\(type)", #"{"specversion":"1.0","id":"\#(plugin):\#(cause):0","source":"/eventbus/\#(plugin)","type":"\#(type)","#
            + #""subject":"\#(subject)","data":{"cid":"\#(subject)"}}"#)
    }

    @Test func aUserSeesTheirChannelsAsMembershipChanges() throws {
        let bob = try StreamScope(user: "bob", prefix: nil)
        #expect(bob.prefix == "out/" && bob.readsMembership)
        let (seen, feed) = Self.read(bob, [
            Self.out("messaging:general"),  // before bob is a member of anything
            Self.membership("channel.created", "messaging:general", #"{"cid":"messaging:general","members":["ann","bob"]}"#),
            Self.membership("channel.created", "messaging:secret", #"{"cid":"messaging:secret","members":["ann"]}"#),
            Self.out("messaging:general", "message.new"),
            Self.out("messaging:secret", "message.new"),
            Self.out("@bob", "notification.mark_read"),
            Self.out("@bobby", "notification.mark_read"),
            Self.out("@ann", "notification.mark_read"),
            Self.membership("member.removed", "messaging:general", #"{"cid":"messaging:general","user_id":"bob"}"#),
            Self.out("messaging:general", "message.new"),
            Self.membership("member.added", "messaging:secret", #"{"cid":"messaging:secret","user_id":"bob"}"#),
            Self.out("messaging:secret", "message.delivered"),
            Self.membership("member.removed", "messaging:secret", #"{"cid":"messaging:secret","user_id":"ann"}"#),
            Self.out("messaging:secret", "message.deleted"),
        ])
        #expect(seen == ["out/messaging:general/message.new", "out/@bob/notification.mark_read",
                         "out/messaging:secret/message.delivered", "out/messaging:secret/message.deleted"])
        #expect(feed.channels.channels == ["messaging:secret"])
    }

    @Test func membershipFollowsTheReducersRules() throws {
        var channels = UserChannels(user: "bob")
        var seq: UInt64 = 0
        func apply(_ type: String, _ data: String) {
            seq += 1
            channels.apply(type: type, event: Array(Events.event("x", type, subject: "s", data: data).utf8), seq: seq)
        }
        apply("member.added", #"{"cid":"messaging:later","user_id":"bob"}"#)
        #expect(!channels.contains("messaging:later"), "the reducer rejects member.added to a channel never created")
        apply("channel.created", #"{"cid":"messaging:later","members":["ann"]}"#)
        #expect(!channels.contains("messaging:later"))
        apply("member.added", #"{"cid":"messaging:later","user_id":"bob"}"#)
        #expect(channels.contains("messaging:later"))
        apply("channel.created", #"{"cid":"messaging:later","members":["ann"]}"#)
        #expect(channels.contains("messaging:later"), "a repeated channel.created never removes")
        apply("member.updated", #"{"cid":"messaging:later","user_id":"bob"}"#)
        apply("message.new", #"{"cid":"messaging:later"}"#)
        #expect(channels.channels == ["messaging:later"])
        apply("member.removed", #"{"cid":"messaging:later","user_id":"bobby"}"#)
        #expect(channels.contains("messaging:later"))
        apply("member.removed", #"{"cid":"messaging:later","user_id":"bob"}"#)
        #expect(channels.channels.isEmpty)
    }

    @Test func aDeletedChannelEndsEveryMembershipAndComesBackAfresh() throws {
        var channels = UserChannels(user: "bob")
        var seq: UInt64 = 0
        func apply(_ type: String, _ data: String) {
            seq += 1
            channels.apply(type: type, event: Array(Events.event("x", type, subject: "s", data: data).utf8), seq: seq)
        }
        apply("channel.created", #"{"cid":"messaging:reborn","members":["ann","bob"]}"#)
        apply("channel.created", #"{"cid":"messaging:other","members":["bob"]}"#)
        apply("channel.deleted", #"{"cid":"messaging:reborn"}"#)
        #expect(channels.channels == ["messaging:other"], "the deleted channel's membership ends, the other channel's stays")
        apply("member.added", #"{"cid":"messaging:reborn","user_id":"bob"}"#)
        #expect(!channels.contains("messaging:reborn"), "the reducer rejects member.added to a deleted channel (unknown_channel)")
        apply("channel.created", #"{"cid":"messaging:reborn","members":["ann"]}"#)
        #expect(!channels.contains("messaging:reborn"), "created again, afresh: the old members are not in it")
        apply("member.added", #"{"cid":"messaging:reborn","user_id":"bob"}"#)
        #expect(channels.contains("messaging:reborn"), "added to the new channel, bob is in it")
        apply("channel.deleted", #"{"cid":"messaging:never"}"#)
        #expect(channels.channels == ["messaging:other", "messaging:reborn"])
    }

    @Test func aDeletedUserLeavesEveryChannelAndMayComeBack() throws {
        let bob = try StreamScope(user: "bob", prefix: nil)
        let (seen, feed) = StreamScopeTests.read(bob, [
            Self.membership("channel.created", "messaging:general", #"{"cid":"messaging:general","members":["ann","bob"]}"#),
            Self.membership("channel.created", "messaging:team", #"{"cid":"messaging:team","members":["bob"]}"#),
            Self.out("messaging:general", "message.new"),
            ("in/@bobby/user.deleted", Events.event("del-bobby", "user.deleted", subject: "@bobby", data: #"{"user_id":"bobby"}"#)),
            Self.out("messaging:team", "message.new"),
            ("in/@bob/user.deleted", Events.event("del-bob", "user.deleted", subject: "@bob", data: #"{"user_id":"bob","hard_delete":true}"#)),
            Self.out("messaging:general", "message.deleted"),
            Self.out("messaging:team", "message.read"),
            Self.out("@bob", "notification.mark_read"),
            // Added back (a restore): from here on, that channel only.
            Self.membership("member.added", "messaging:team", #"{"cid":"messaging:team","user_id":"bob"}"#),
            Self.out("messaging:general", "message.read"),
            Self.out("messaging:team", "message.delivered"),
        ])
        #expect(seen == ["out/messaging:general/message.new", "out/messaging:team/message.new", "out/@bob/notification.mark_read",
                         "out/messaging:team/message.delivered"])
        #expect(feed.channels.channels == ["messaging:team"])
    }

    /// The pipeline appends a plugin's output after the event it was made for, and events of
    /// `in` published meanwhile may come between: membership is judged where the output was
    /// caused, so what bob sees does not depend on how fast the pipeline ran.
    @Test func anOutputIsJudgedByTheMembershipWhereItWasCaused() throws {
        let bob = try StreamScope(user: "bob", prefix: nil)
        let log = [
            Self.membership("channel.created", "messaging:general", #"{"cid":"messaging:general","members":["ann","bob"]}"#),  // 1
            (topic: "in/messaging:general/message.new", event: "{}"),                                                          // 2: g1
            Self.membership("member.removed", "messaging:general", #"{"cid":"messaging:general","user_id":"bob"}"#),          // 3
            (topic: "in/messaging:general/message.new", event: "{}"),                                                          // 4: g2
            Self.membership("channel.created", "messaging:team", #"{"cid":"messaging:team","members":["ann"]}"#),            // 5
            (topic: "in/messaging:team/message.new", event: "{}"),                                                             // 6: t1
            Self.membership("member.added", "messaging:team", #"{"cid":"messaging:team","user_id":"bob"}"#),                 // 7
            (topic: "in/messaging:team/message.new", event: "{}"),                                                             // 8: t2
            // The reducer's outputs, all appended after the membership events above.
            Self.out("messaging:general", "message.new", causedAt: 2),  // sent while bob was a member: shown
            Self.out("messaging:general", "message.new", causedAt: 4),  // after his removal: not shown
            Self.out("messaging:team", "message.new", causedAt: 6),     // before he joined: not shown
            Self.out("messaging:team", "message.new", causedAt: 8),     // after: shown
            // An event that names no cause of `in` (not from the plugin that reads it) is judged
            // by the membership as far as read: bob is in team, not in general.
            Self.out("messaging:general", "message.read"),
            Self.out("messaging:team", "message.read"),
            Self.out("messaging:general", "message.read", causedAt: 2, by: "read-privacy"),
            Self.out("messaging:team", "message.read", causedAt: 6, by: "read-privacy"),
        ]
        let (seen, feed) = Self.read(bob, log)
        #expect(seen == ["out/messaging:general/message.new", "out/messaging:team/message.new", "out/messaging:team/message.read",
                         "out/messaging:team/message.read"])
        #expect(feed.contains("messaging:general", at: 2))
        #expect(!feed.contains("messaging:general", at: 3), "the removal counts from its own SEQ")
        #expect(!feed.contains("messaging:team", at: 6))
        #expect(feed.contains("messaging:team", at: 7))
        #expect(feed.channels.channels == ["messaging:team"])
        // A pipeline without plugins names no cause: every output is judged as far as read.
        #expect(Self.take(bob, log, firstPlugin: nil) == ["out/messaging:team/message.new", "out/messaging:team/message.new",
                                                          "out/messaging:team/message.read", "out/messaging:team/message.read"])
        #expect(StreamScope.firstPlugin(stages: ["in", "receipt-reducer", "read-privacy", "out", "diag"]) == "receipt-reducer")
        #expect(StreamScope.firstPlugin(stages: ["in", "out", "diag"]) == nil)
        #expect(StreamScope.firstPlugin(stages: ["in"]) == nil)
    }

    /// The pump waits for the reader of `in` to reach an output's cause; a reader that ends
    /// answers every wait, now and later, `false`; a cancelled wait is taken back.
    @Test func theFeedAnswersWaitsAsTheReaderAppliesIn() {
        var feed = MembershipFeedState<String>(user: "bob")
        #expect(feed.wait(through: 0, "none") == .answered(true))
        #expect(feed.wait(through: 2, "two") == .waiting(id: 0))
        #expect(feed.wait(through: 3, "three") == .waiting(id: 1))
        #expect(feed.wait(through: 5, "five") == .waiting(id: 2))
        #expect(feed.apply(type: "message.new", event: Array("{}".utf8), seq: 1).isEmpty)
        #expect(feed.apply(type: "message.new", event: Array("{}".utf8), seq: 3) == ["two", "three"])
        #expect(feed.cancel(0) == nil, "answered already")
        #expect(feed.cancel(2) == "five")
        #expect(feed.wait(through: 9, "nine") == .waiting(id: 3))
        #expect(feed.end() == ["nine"])
        #expect(feed.wait(through: 9, "late") == .answered(false))
        #expect(feed.wait(through: 3, "reached") == .answered(true), "what was applied stays applied")
    }

    @Test func aTokenOfARoleSeesEverythingUnderItsPrefix() throws {
        let all = try StreamScope(user: nil, prefix: nil)
        #expect(all.prefix == "out/" && !all.readsMembership)
        let deliveries = [Self.out("messaging:general"), Self.out("@ann"), Self.out("messaging:other")]
        #expect(Self.take(all, deliveries) == deliveries.map(\.topic))
        let one = try StreamScope(user: nil, prefix: "out/messaging:general/")
        #expect(one.prefix == "out/messaging:general/")
        #expect(Self.take(one, deliveries) == ["out/messaging:general/message.read"])
        let bobsOwn = try StreamScope(user: "bob", prefix: "out/@bob/")
        #expect(Self.take(bobsOwn, [Self.out("@bob"), Self.out("@ann"), Self.out("messaging:general")]) == ["out/@bob/message.read"])
    }

    @Test func aPrefixOutsideOutIs400() {
        for prefix in ["in/", "diag/", "", "ou"] {
            #expect(throws: HTTPProblem.self, "\(prefix)") { try StreamScope(user: nil, prefix: prefix) }
        }
    }

    @Test func consumerNamesAreReused() {
        var pool = ConsumerNamePool(base: "eventbus-http.p8080")
        #expect([pool.take(), pool.take(), pool.take()] == ["eventbus-http.p8080.0", "eventbus-http.p8080.1", "eventbus-http.p8080.2"])
        pool.give("eventbus-http.p8080.1")
        pool.give("eventbus-http.p9090.0")
        #expect(pool.count == 2)
        #expect(pool.take() == "eventbus-http.p8080.1")
        #expect(pool.take() == "eventbus-http.p8080.3")
    }
}
