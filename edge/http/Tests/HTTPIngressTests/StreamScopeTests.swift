import EventBus
import HTTPIngress
import Testing

/// Who sees which event of `out`, with membership followed in log order, without I/O.
@Suite struct StreamScopeTests {
    /// The deliveries of a stream's consumer, in log order (SEQ 1, 2, …): `in/` membership
    /// events and `out/` events.
    static func take(_ scope: inout StreamScope, _ deliveries: [(topic: String, event: String)]) -> [String] {
        deliveries.enumerated().filter { scope.take(topic: $1.topic, event: Array($1.event.utf8), seq: UInt64($0 + 1)) }.map(\.element.topic)
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
        var bob = try StreamScope(user: "bob", prefix: nil)
        #expect(bob.consumerPrefixes == ["in/", "out/"] && bob.readsFromStart)
        let seen = Self.take(&bob, [
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
        #expect(bob.membership?.channels == ["messaging:secret"])
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
        var bob = try StreamScope(user: "bob", prefix: nil)
        let seen = StreamScopeTests.take(&bob, [
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
        #expect(bob.membership?.channels == ["messaging:team"])
    }

    /// The pipeline appends a plugin's output after the event it was made for, and events of
    /// `in` published meanwhile may come between: membership is judged where the output was
    /// caused, so what bob sees does not depend on how fast the pipeline ran.
    @Test func anOutputIsJudgedByTheMembershipWhereItWasCaused() throws {
        var bob = try StreamScope(user: "bob", prefix: nil)
        let seen = Self.take(&bob, [
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
            // An event that names no cause is judged at its own SEQ (13): bob is in team, not in general.
            Self.out("messaging:general", "message.read"),
            Self.out("messaging:team", "message.read"),
        ])
        #expect(seen == ["out/messaging:general/message.new", "out/messaging:team/message.new", "out/messaging:team/message.read"])
        #expect(bob.membership?.contains("messaging:general", at: 2) == true)
        #expect(bob.membership?.contains("messaging:general", at: 3) == false, "the removal counts from its own SEQ")
        #expect(bob.membership?.contains("messaging:team", at: 6) == false)
        #expect(bob.membership?.contains("messaging:team", at: 7) == true)
        #expect(bob.membership?.channels == ["messaging:team"])
    }

    @Test func aTokenOfARoleSeesEverythingUnderItsPrefix() throws {
        var all = try StreamScope(user: nil, prefix: nil)
        #expect(all.consumerPrefixes == ["out/"] && !all.readsFromStart)
        let deliveries = [Self.out("messaging:general"), Self.out("@ann"), Self.out("messaging:other")]
        #expect(Self.take(&all, deliveries) == deliveries.map(\.topic))
        var one = try StreamScope(user: nil, prefix: "out/messaging:general/")
        #expect(one.consumerPrefixes == ["out/messaging:general/"])
        #expect(Self.take(&one, deliveries) == ["out/messaging:general/message.read"])
        var bobsOwn = try StreamScope(user: "bob", prefix: "out/@bob/")
        #expect(Self.take(&bobsOwn, [Self.out("@bob"), Self.out("@ann"), Self.out("messaging:general")]) == ["out/@bob/message.read"])
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
