import Foundation
import HTTPIngress
import Testing

/// SSE framing, written and read back, without I/O.
@Suite struct ServerSentEventTests {
    @Test func anEventIsItsFieldsThenABlankLine() {
        let event = ServerSentEvent(id: "42", event: "message.read", data: Array(#"{"a":1}"#.utf8))
        #expect(String(decoding: event.bytes, as: UTF8.self) == "id: 42\nevent: message.read\ndata: {\"a\":1}\n\n")
        #expect(String(decoding: ServerSentEvent.comment("heartbeat").bytes, as: UTF8.self) == ": heartbeat\n\n")
    }

    @Test func lineBreaksNeverSplitAField() {
        let pretty = "{\r\n  \"a\": 1,\n  \"b\": \"x\"\r}"
        let event = ServerSentEvent(id: "7\n", event: "t\r\nx", data: Array(pretty.utf8))
        let text = String(decoding: event.bytes, as: UTF8.self)
        #expect(text.filter { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }.count == 4, "three field lines and the blank line: \(text)")
        let read = SSEReader.messages(text)
        #expect(read == [SSEReader.Message(id: "7 ", event: "t  x", data: "{    \"a\": 1,   \"b\": \"x\" }")])
        #expect(String(decoding: ServerSentEvent.comment("a\nb").bytes, as: UTF8.self) == ": a b\n\n")
    }

    @Test func theReaderTakesOnlyWholeMessages() {
        let stream = ": eventbus stream after 0\n\nid: 1\nevent: e\ndata: {}\n\nid: 2\ndata: x\ndata: y\n\nid: 3\nda"
        let read = SSEReader.messages(stream)
        #expect(read == [SSEReader.Message(comment: "eventbus stream after 0"), SSEReader.Message(id: "1", event: "e", data: "{}"),
                         SSEReader.Message(id: "2", data: "x\ny")])
        #expect(SSEReader.messages(stream.replacingOccurrences(of: "\n", with: "\r\n")) == read, "CRLF line ends")
        #expect(SSEReader.messages(stream.replacingOccurrences(of: "\n", with: "\r")) == read, "CR line ends")
    }
}
