import EventBusCore
import Testing

@testable import EventBusBroker

/// The broker's topics come from ``TopicTable``: whatever it holds, each topic it hands out
/// must be the bytes ``Topic/make(stage:subject:type:)`` makes, and a topic it holds is
/// handed out again rather than made anew.
@Suite struct TopicTableTests {
    private static func storage(_ topic: [UInt8]) -> UnsafeRawPointer? {
        topic.withUnsafeBytes { $0.baseAddress }
    }

    @Test func aTopicAskedForAgainIsTheOneHeld() {
        var table = TopicTable()
        let stage = Array("out".utf8)
        let first = table.topic(stage: stage, subject: Array("messaging:general".utf8)[...], type: Array("message.read".utf8)[...])
        let again = table.topic(stage: stage, subject: Array("messaging:general".utf8)[...], type: Array("message.read".utf8)[...])
        #expect(first == Array("out/messaging:general/message.read".utf8))
        #expect(again == first)
        #expect(Self.storage(again) == Self.storage(first), "the second ask allocated a topic of its own")
    }

    /// With one slot every topic collides with the one before: a held topic of the same
    /// length and hash slot, differing in any part or at a slash, is never handed out.
    @Test func aCollidingTopicIsNeverHandedOutForAnother() {
        var table = TopicTable(slotCount: 1)
        let cases: [(String, String, String)] = [
            ("out", "messaging:a", "message.read"), ("out", "messaging:b", "message.read"),
            ("out", "messaging:a", "message.reae"), ("in", "messaging:a", "message.read"),
            ("out", "messaging:", "amessage.read"), ("out", "messaging:a/", "message.rea"),
            ("ou", "tmessaging:a", "message.read"), ("out", "", ""), ("", "", "out"), ("out", "messaging:a", "message.read"),
        ]
        for (stage, subject, type) in cases {
            let topic = table.topic(stage: Array(stage.utf8), subject: Array(subject.utf8)[...], type: Array(type.utf8)[...])
            #expect(topic == Topic.make(stage: stage, subject: subject, type: type), "\(stage)/\(subject)/\(type)")
        }
    }

    /// Generated topics (short and long parts, few and many distinct ones, small and large
    /// tables) against ``Topic/make(stage:subject:type:)``; the repeats must hit.
    @Test func generatedTopicsMatchTheirMadeBytes() {
        var random = SplitMix64(seed: 18)
        for slotCount in [1, 4, 64, 4_096] {
            var table = TopicTable(slotCount: slotCount)
            var hits = 0
            var previous: (key: String, storage: UnsafeRawPointer?)?
            for _ in 0..<5_000 {
                let stage = ["in", "out", "diag", "reducer-1"][Int(random.next() % 4)]
                let subject = String(repeating: "s", count: Int(random.next() % 3)) + "messaging:c\(random.next() % 20)"
                    + String(repeating: "x", count: Int(random.next() % 17))
                let type = ["message.read", "notification.mark_read", "message.delivered", "x"][Int(random.next() % 4)]
                let topic = table.topic(stage: Array(stage.utf8), subject: Array(subject.utf8)[...], type: Array(type.utf8)[...])
                #expect(topic == Topic.make(stage: stage, subject: subject, type: type))
                let key = "\(stage)/\(subject)/\(type)"
                if let previous, previous.key == key {
                    #expect(Self.storage(topic) == previous.storage, "a repeat straight after was made anew")
                    hits += 1
                }
                previous = (key, Self.storage(topic))
                // Ask again at once now and then: the topic just made is held.
                if random.next() % 8 == 0 {
                    let again = table.topic(stage: Array(stage.utf8), subject: Array(subject.utf8)[...], type: Array(type.utf8)[...])
                    #expect(Self.storage(again) == Self.storage(topic))
                    hits += 1
                }
            }
            #expect(hits > 0)
        }
    }

    /// A forwarded record's topic: the next stage, then the rest of the topic it forwards.
    /// With one slot, topics of either kind evict each other and are never mistaken.
    @Test func aForwardedTopicIsItsStageThenTheSuffix() {
        var table = TopicTable(slotCount: 1)
        var random = SplitMix64(seed: 19)
        for _ in 0..<2_000 {
            let stage = ["out", "read-privacy", "receipt-reducer", "o"][Int(random.next() % 4)]
            let subject = "messaging:c\(random.next() % 5)", type = ["message.read", "notification.mark_read"][Int(random.next() % 2)]
            let source = Array("receipt-reducer/\(subject)/\(type)".utf8)
            let suffix = source[source.firstIndex(of: UInt8(ascii: "/"))!...]
            let topic: [UInt8]
            if random.next() % 2 == 0 {
                topic = table.topic(stage: Array(stage.utf8), suffix: suffix)
            } else {
                topic = table.topic(stage: Array(stage.utf8), subject: Array(subject.utf8)[...], type: Array(type.utf8)[...])
            }
            #expect(topic == Topic.make(stage: stage, subject: subject, type: type))
        }
        let stage = Array("out".utf8), source = Array("reducer/messaging:general/message.read".utf8)
        let first = table.topic(stage: stage, suffix: source[7...])
        let again = table.topic(stage: stage, suffix: source[7...])
        #expect(first == Array("out/messaging:general/message.read".utf8))
        #expect(Self.storage(again) == Self.storage(first), "the second ask allocated a topic of its own")
    }

    /// A subject sliced out of a larger frame (the PUB path's case) is read at its own indices.
    @Test func aSlicedSubjectIsReadFromItsOwnRange() {
        var table = TopicTable()
        let frame = Array(#"{"subject":"messaging:general","type":"message.read"}"#.utf8)
        let subject = frame[12..<29], type = frame[39..<51]
        #expect(String(decoding: subject, as: UTF8.self) == "messaging:general")
        let topic = table.topic(stage: Array("in".utf8), subject: subject, type: type)
        #expect(topic == Array("in/messaging:general/message.read".utf8))
        #expect(table.topic(stage: Array("in".utf8), subject: subject, type: type) == topic)
    }
}
