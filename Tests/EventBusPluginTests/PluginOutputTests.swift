import EventBus
import Testing

@testable import EventBusPlugin

/// What a plugin emits: valid envelopes with deterministic ids, written from
/// prepared parts exactly as a JSON writer writes them member by member.
@Suite struct PluginOutputTests {
    /// The envelope as `JSONWriter` writes it member by member: what the prepared parts must equal.
    static func expected(plugin: String, seq: UInt64, n: Int, type: String, subject: String, time: String?,
                         replyto: String? = nil, data: String) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("specversion"); w.string("1.0")
        w.key("id"); w.string("\(plugin):\(seq):\(n)")
        w.key("source"); w.string("/eventbus/\(plugin)")
        w.key("type"); w.string(type)
        w.key("subject"); w.string(subject)
        if let time { w.key("time"); w.string(time) }
        if let replyto { w.key("replyto"); w.string(replyto) }
        w.key("data"); w.raw(Array(data.utf8))
        w.endObject()
        return w.bytes
    }

    @Test(arguments: [(UInt64(1), "receipt-reducer"), (UInt64(1_234_567_890_123), "a"), (UInt64(0), "x_y-z")])
    func emittedEventsAreTheEnvelopesAWriterMakesWithIdsFromSeqAndPosition(seq: UInt64, plugin: String) throws {
        var output = PluginOutput(plugin: plugin)
        output.begin(seq)
        output.emit(type: "message.read", subject: "messaging:general", data: Array(#"{"cid":"messaging:general"}"#.utf8),
                    time: "2026-11-24T08:00:00.000Z")
        output.emit(type: "notification.mark_read", subject: "@b\"ob", data: Array("{}".utf8), time: nil, to: .diag)
        output.emit(type: "x", subject: "s", data: Array("{}".utf8), time: nil)
        #expect(output.forward == [
            Self.expected(plugin: plugin, seq: seq, n: 0, type: "message.read", subject: "messaging:general",
                          time: "2026-11-24T08:00:00.000Z", data: #"{"cid":"messaging:general"}"#),
            Self.expected(plugin: plugin, seq: seq, n: 2, type: "x", subject: "s", time: nil, data: "{}"),
        ])
        #expect(output.diagnostics == [
            Self.expected(plugin: plugin, seq: seq, n: 1, type: "notification.mark_read", subject: "@b\"ob", time: nil, data: "{}"),
        ])
        for event in output.forward + output.diagnostics {
            let envelope = try EventValidator.validate(event, stage: "any").envelope
            #expect(envelope.id.hasPrefix("\(plugin):\(seq):"))
            #expect(envelope.source == "/eventbus/\(plugin)")
        }
        // The next input starts its positions again.
        output.removeAll()
        output.begin(seq + 1)
        output.emit(type: "x", subject: "s", data: Array("{}".utf8), time: nil)
        #expect(output.forward == [Self.expected(plugin: plugin, seq: seq + 1, n: 0, type: "x", subject: "s", time: nil, data: "{}")])
    }

    /// ``PluginCause`` reads back the plugin and its input SEQ from what ``PluginOutput`` emits, and from
    /// nothing else: a reader of `out` judges an output where it was caused (docs/http.md).
    @Test func theInputSeqIsReadBackFromAPluginsOwnIdsOnly() throws {
        for seq: UInt64 in [0, 5, .max] {
            var output = PluginOutput(plugin: "receipt-reducer")
            output.begin(seq)
            output.emit(type: "message.read", subject: "messaging:general", data: Array("{}".utf8), time: nil)
            output.emit(type: "message.read", subject: "messaging:general", data: Array("{}".utf8), time: nil)
            #expect(output.forward.map { PluginCause(event: $0) } == Array(repeating: PluginCause(plugin: "receipt-reducer", inputSeq: seq), count: 2))
        }
        #expect(PluginCause(source: "/eventbus/a", id: "a:18446744073709551615:0") == PluginCause(plugin: "a", inputSeq: .max))
        for (source, id) in [("/app/backend", "receipt-reducer:5:1"), ("/eventbus/read-privacy", "receipt-reducer:5:1"),
                             ("/eventbus/receipt-reducer", "receipt-reducer:5"), ("/eventbus/receipt-reducer", "receipt-reducer:5:1:2"),
                             ("/eventbus/receipt-reducer", "receipt-reducer:x:1"), ("/eventbus/receipt-reducer", "receipt-reducer::1"),
                             ("/eventbus/receipt-reducer", "receipt-reducer:5:"), ("/eventbus/r", "rr:5:1"), ("/eventbus/", ":5:1"),
                             ("/eventbus/receipt-reducer", "receipt-reducer:99999999999999999999:0"), ("/eventbus", "x:5:1")] {
            #expect(PluginCause(source: source, id: id) == nil, "\(source) \(id)")
        }
        #expect(PluginCause(event: Array("{}".utf8)) == nil)
        #expect(PluginCause(event: Array("not json".utf8)) == nil)
        let backends = #"{"specversion":"1.0","id":"g1","source":"/app/backend","type":"message.new","subject":"messaging:general","data":{}}"#
        #expect(PluginCause(event: Array(backends.utf8)) == nil)
        // Read from the two members wherever they are, escaped or not; anything but strings names none.
        let escaped = #"{"specversion":"1.0","type":"message.read","id":"receipt-reducer:7:\u0031","subject":"messaging:general","source":"\/eventbus\/receipt-reducer","data":{}}"#
        #expect(PluginCause(event: Array(escaped.utf8)) == PluginCause(plugin: "receipt-reducer", inputSeq: 7))
        let numeric = #"{"specversion":"1.0","id":7,"source":"/eventbus/receipt-reducer","type":"message.read","subject":"messaging:general"}"#
        #expect(PluginCause(event: Array(numeric.utf8)) == nil)
    }
}
