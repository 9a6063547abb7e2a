import ChatGateway
import EventBus
import Testing

/// The fan-out logic without a bus: audiences, the hub and the bounded connection queue.
struct RoutingTests {
    static func delivery(_ seq: UInt64, _ topic: String) -> Delivery {
        Delivery(seq: seq, topic: topic, event: Array(#"{"type":"x"}"#.utf8))
    }

    @Test func audienceComesFromTheTopic() {
        #expect(Audience(topic: "out/messaging:general/message.new") == .channel("messaging:general"))
        #expect(Audience(topic: "out/@bob/notification.mark_read") == .user("bob"))
        #expect(Audience(topic: "diag/messaging:general/receipt.rejected") == nil)
        #expect(Audience(topic: "out/@/x") == nil)
    }

    @Test func frameEmbedsTheEventVerbatim() throws {
        let text = GatewayFrame.text(for: Self.delivery(7, "out/@bob/notification.mark_read"))
        #expect(text == #"{"seq":7,"topic":"out/@bob/notification.mark_read","event":{"type":"x"}}"#)
    }

    @Test func hubRoutesOnlyToTheUsersGiven() async {
        let hub = Hub()
        let (bob, seq) = hub.register(userID: "bob") { Connection(id: 1, userID: "bob", lastSeq: $0, replaying: false, capacity: 8) }
        let (carol, _) = hub.register(userID: "carol") { Connection(id: 2, userID: "carol", lastSeq: $0, replaying: false, capacity: 8) }
        #expect(seq == 0)
        hub.route(Self.delivery(5, "out/@bob/x"), to: ["bob"])
        hub.route(Self.delivery(6, "out/c/x"), to: ["bob", "dan"])
        #expect(hub.routedSeq == 6)
        bob.close()
        carol.close()
        var bobFrames: [String] = []
        for await frame in bob.frames { bobFrames.append(frame) }
        var carolFrames: [String] = []
        for await frame in carol.frames { carolFrames.append(frame) }
        #expect(bobFrames.count == 2)
        #expect(carolFrames.isEmpty)
    }

    @Test func replayThenLiveInOrderWithoutDuplicates() async {
        let connection = Connection(id: 1, userID: "bob", lastSeq: 3, replaying: true, capacity: 16)
        connection.offerLive(Self.delivery(9, "out/c/x"))
        connection.offerLive(Self.delivery(10, "out/c/x"))
        connection.offerReplay(Self.delivery(3, "out/c/x"))
        connection.offerReplay(Self.delivery(5, "out/c/x"))
        connection.offerReplay(Self.delivery(9, "out/c/x"))
        connection.finishReplay()
        connection.offerLive(Self.delivery(10, "out/c/x"))
        connection.offerLive(Self.delivery(11, "out/c/x"))
        connection.close()
        var seqs: [String] = []
        for await frame in connection.frames { seqs.append(String(frame.split(separator: ",")[0].dropFirst(7))) }
        #expect(seqs == ["5", "9", "10", "11"])
        #expect(!connection.overflowed)
    }

    @Test func aFullQueueEndsTheConnection() async {
        let connection = Connection(id: 1, userID: "bob", lastSeq: 0, replaying: false, capacity: 2)
        for seq in 1...3 { connection.offerLive(Self.delivery(UInt64(seq), "out/c/x")) }
        var count = 0
        for await _ in connection.frames { count += 1 }
        #expect(connection.overflowed)
        #expect(count <= 2)
    }
}
