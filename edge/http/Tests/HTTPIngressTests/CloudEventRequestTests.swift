import EventBus
import HTTPIngress
import Testing

/// The three CloudEvents HTTP modes read as values, without I/O.
@Suite struct CloudEventRequestTests {
    static let event = #"{"specversion":"1.0","id":"r1","source":"/chat-api","type":"message.read","subject":"messaging:general","data":{"cid":"messaging:general","user_id":"bob","message_id":"m1"}}"#

    static func parse(_ contentType: String?, _ body: String, headers: [(String, String)] = []) throws(HTTPProblem) -> CloudEventRequest {
        try CloudEventRequest(contentType: contentType, headers: headers.map { (name: $0.0, value: $0.1) }, body: Array(body.utf8))
    }

    static func problem(_ body: () throws(HTTPProblem) -> CloudEventRequest) -> HTTPProblem? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    @Test func structuredModeKeepsTheBytes() throws {
        let request = try Self.parse("application/cloudevents+json; charset=utf-8", Self.event)
        #expect(request.mode == .structured)
        #expect(request.events == [Array(Self.event.utf8)])
    }

    @Test func batchModeKeepsTheOrder() throws {
        let second = Self.event.replacingOccurrences(of: "\"r1\"", with: "\"r2\"")
        let third = Self.event.replacingOccurrences(of: "\"r1\"", with: "\"r0\"")
        let request = try Self.parse("Application/CloudEvents-Batch+JSON", "[\(Self.event), \(second),\n\(third)]")
        #expect(request.mode == .batch)
        let ids = try request.events.map { event in try #require(try JSONParser.parse(event)["id"]?.stringValue) }
        #expect(ids == ["r1", "r2", "r0"])
        #expect(try JSONParser.parse(request.events[0]) == JSONParser.parse(Array(Self.event.utf8)))
    }

    @Test func binaryModeBuildsTheEnvelopeFromTheHeaders() throws {
        let request = try Self.parse("application/json", #"{"cid":"messaging:general","user_id":"bob","message_id":"m1"}"#, headers: [
            ("Ce-Specversion", "1.0"), ("ce-id", "r1"), ("ce-source", "/chat%2Dapi"), ("ce-type", "message.read"),
            ("ce-subject", "messaging:general"), ("ce-time", "2026-11-22T03:10:00.000Z"), ("ce-traceparent", "00-abc-01"),
            ("Authorization", "Bearer x"),
        ])
        #expect(request.mode == .binary)
        let text = String(decoding: try #require(request.events.first), as: UTF8.self)
        #expect(text == #"{"specversion":"1.0","id":"r1","source":"/chat-api","type":"message.read","subject":"messaging:general","time":"2026-11-22T03:10:00.000Z","traceparent":"00-abc-01","datacontenttype":"application/json","data":{"cid":"messaging:general","user_id":"bob","message_id":"m1"}}"#)
    }

    @Test func binaryModeNamesAMissingHeader() {
        let problem = Self.problem { () throws(HTTPProblem) in
            try Self.parse("application/json", "{}", headers: [("ce-specversion", "1.0"), ("ce-id", "x"), ("ce-type", "message.read"), ("ce-subject", "s")])
        }
        #expect(problem?.status == 400)
        #expect(problem?.code == "bad_event")
        #expect(problem?.field == "ce-source")
    }

    @Test func binaryModeTakesJSONDataOnly() {
        let problem = Self.problem { () throws(HTTPProblem) in
            try Self.parse("text/plain", "hi", headers: [("ce-specversion", "1.0")])
        }
        #expect(problem?.status == 415)
        #expect(problem?.code == "unsupported_media_type")
    }

    @Test func otherMediaTypesAre415() {
        for contentType in [nil, "text/plain", "application/json", "application/x-www-form-urlencoded"] {
            let problem = Self.problem { () throws(HTTPProblem) in try Self.parse(contentType, Self.event) }
            #expect(problem?.status == 415, "\(contentType ?? "none")")
            #expect(problem?.detail.contains("application/cloudevents+json") == true)
        }
    }

    @Test func malformedJSONIs400BadJSON() {
        let cases: [(String, String)] = [
            ("application/cloudevents+json", #"{"specversion":"1.0","#),
            ("application/cloudevents+json", "[\(Self.event)]"),
            ("application/cloudevents-batch+json", Self.event),
            ("application/cloudevents-batch+json", "[\(Self.event), 3]"),
        ]
        for (contentType, body) in cases {
            let problem = Self.problem { () throws(HTTPProblem) in try Self.parse(contentType, body) }
            #expect(problem?.status == 400, "\(body)")
            #expect(problem?.code == "bad_json", "\(body)")
        }
    }

    @Test func batchLimits() {
        let empty = Self.problem { () throws(HTTPProblem) in try Self.parse("application/cloudevents-batch+json", "[]") }
        #expect(empty?.status == 400)
        #expect(empty?.code == "bad_event")
        let many = "[" + Array(repeating: Self.event, count: 1_001).joined(separator: ",") + "]"
        let tooMany = Self.problem { () throws(HTTPProblem) in try Self.parse("application/cloudevents-batch+json", many) }
        #expect(tooMany?.status == 413)
        #expect(tooMany?.code == "too_large")
    }
}
