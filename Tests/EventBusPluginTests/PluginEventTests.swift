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
}
