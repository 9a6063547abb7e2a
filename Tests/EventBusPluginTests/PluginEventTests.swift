import EventBus
import EventBusPlugin
import Testing

/// A plugin reads an event's type and subject from its topic, without parsing the event.
@Suite struct PluginEventTests {
    @Test(arguments: [
        ("in/messaging:general/message.read", "messaging:general", "message.read"),
        ("out/@bob/notification.mark_read", "@bob", "notification.mark_read"),
        ("read-privacy/messaging/channel_type.updated", "messaging", "channel_type.updated"),
        ("diag/ünïcode:é/receipt.rejected", "ünïcode:é", "receipt.rejected"),
        ("no-slash", "", ""),
        ("in/only-two", "", "only-two"),
    ])
    func typeAndSubjectComeFromTheTopic(topic: String, subject: String, type: String) {
        let event = PluginEvent(seq: 1, topic: topic, bytes: [])
        #expect(event.subject == subject)
        #expect(event.type == type)
    }

    /// The typed payload is read for the ingress types named by the topic, and for no other
    /// type (a query, a diagnostic, a plugin's own type, a near name), whatever the bytes hold.
    @Test func onlyAnIngressTypeGivesAPayload() throws {
        let bytes = Array(#"{"specversion":"1.0","id":"a","source":"/s","type":"message.read","subject":"messaging:x","time":"2026-11-22T03:10:00.123Z","data":{"cid":"messaging:x","user_id":"bob","message_id":"m1"}}"#.utf8)
        let read = PluginEvent(seq: 1, topic: "in/messaging:x/message.read", bytes: bytes)
        #expect(try read.ingressPayload()?.type == .messageRead)
        #expect(try read.ingress()?.payload != nil)
        for type in ["query", "receipt.rejected", "plugin.own", "message.rea", "message.readx"] {
            let other = PluginEvent(seq: 1, topic: "in/messaging:x/\(type)", bytes: bytes)
            #expect(try other.ingressPayload() == nil, "\(type)")
            #expect(try other.ingress() == nil, "\(type)")
        }
    }

    /// Every type docs/events.md names is known from the topic at any stage, as its raw
    /// value says; a plugin's own type and near names are not.
    @Test func theKnownTypeIsFoundFromTheTopicAtAnyStage() {
        for type in EventType.allCases {
            for stage in ["in", "receipt-reducer", "out", "diag"] {
                let event = PluginEvent(seq: 1, topic: "\(stage)/messaging:x/\(type.rawValue)", bytes: [])
                #expect(event.knownType == type, "\(stage) \(type.rawValue)")
            }
        }
        for type in ["plugin.own", "message.rea", "message.readx", "Message.read", ""] {
            #expect(PluginEvent(seq: 1, topic: "out/@bob/\(type)", bytes: []).knownType == nil, "\(type)")
        }
    }
}

/// A plugin reads the strings of `data` it needs by scans, as a parse would read them.
@Suite struct PluginEventDataStringsTests {
    static let keys = JSONScanner.Keys(["user_id", "cid", "n", "absent"])

    @Test func stringsAreDecodedAndAnythingElseIsNil() throws {
        let bytes = Array(#"{"specversion":"1.0","id":"a","source":"/s","type":"message.read","subject":"messaging:x","time":"2026-11-22T03:10:00.123Z","data":{"user_id":"b\u006fb","cid":"messaging:x","n":1}}"#.utf8)
        let event = PluginEvent(seq: 3, topic: "receipt-reducer/messaging:x/message.read", bytes: bytes)
        let (envelope, strings) = try event.dataStrings(Self.keys)
        #expect(strings == ["bob", "messaging:x", nil, nil])
        #expect(envelope.time == "2026-11-22T03:10:00.123Z")
        let parsed = try event.envelope()
        #expect(strings[0] == parsed.data?["user_id"]?.stringValue)
    }

    @Test func anEventWithoutDataGivesNoStringsAndABrokenOneItsError() throws {
        let bare = PluginEvent(seq: 1, topic: "x/y/z", bytes: Array(#"{"specversion":"1.0","id":"a","source":"/s","type":"t","subject":"y"}"#.utf8))
        #expect(try bare.dataStrings(Self.keys).strings == [nil, nil, nil, nil])
        let broken = PluginEvent(seq: 2, topic: "x/y/z", bytes: Array("{".utf8))
        #expect(throws: EventValidationError.self) { try broken.dataStrings(Self.keys) }
    }

    @Test func loggedDataStringsReadWhatDataStringsRead() throws {
        let texts = [
            #"{"specversion":"1.0","id":"a","source":"/s","type":"message.read","subject":"messaging:x","data":{"user_id":"b\u006fb","cid":"messaging:x","n":1}}"#,
            #"{"data":{"cid":"messaging:y","x":{"user_id":"deeper"}},"specversion":"1.0","id":"a","source":"/s","type":"t","subject":"y"}"#,
            #"{"specversion":"1.0","id":"a","source":"/s","type":"t","subject":"y","data":{"user_id":7,"absent":"here"}}"#,
            #"{"specversion":"1.0","id":"a","source":"/s","type":"t","subject":"y"}"#,
        ]
        for text in texts {
            let event = PluginEvent(seq: 1, topic: "x/y/z", bytes: Array(text.utf8))
            #expect(try event.loggedDataStrings(Self.keys) == event.dataStrings(Self.keys).strings, "\(text)")
        }
        let first = PluginEvent(seq: 1, topic: "x/y/z", bytes: Array(texts[0].utf8))
        #expect(try first.loggedDataStrings(Self.keys) == ["bob", "messaging:x", nil, nil])
        // A `data` that is not an object has no members (the broker refuses one when it logs the event).
        let array = PluginEvent(seq: 1, topic: "x/y/z", bytes: Array(#"{"type":"t","data":["user_id"]}"#.utf8))
        #expect(try array.loggedDataStrings(Self.keys) == [nil, nil, nil, nil])
        // Not JSON: the scan's error, as bad_json.
        let broken = PluginEvent(seq: 2, topic: "x/y/z", bytes: Array(#"{"data":{"cid":"x""#.utf8))
        #expect { try broken.loggedDataStrings(Self.keys) } throws: { error in
            (error as? EventValidationError)?.code == .badJSON
        }
    }
}
