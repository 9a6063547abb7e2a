import EventBus
import Foundation
import Testing

/// REQ: queries travel the pipeline as events; replies at `out` go back to the requester.
@Suite struct RequestTests {
    @Test func unknownServiceIsRefusedAtOnce() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let reply = try bus.peer().call("REQ", ["weather", #"{"method":"today","params":{}}"#])
        #expect(reply.code == "unknown_service")
    }

    @Test func knownServiceWithNobodyAnsweringTimesOut() throws {
        let bus = try TestBroker { $0.requestTimeoutMilliseconds = 200 }; defer { bus.stop() }
        let reply = try bus.peer().call("REQ", ["receipts", #"{"method":"channel_state","params":{"cid":"messaging:general","viewer":"bob"}}"#])
        #expect(reply.code == "timeout")
    }

    @Test func malformedRequestsAreRefusedWithTheirCodes() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        #expect(try peer.call("REQ", ["receipts", "{"]).code == "bad_json")
        #expect(try peer.call("REQ", ["receipts", #"{"params":{}}"#]).code == "bad_request")
        #expect(try peer.call("REQ", ["receipts", #"{"method":"x","params":[1]}"#]).code == "bad_request")
        #expect(try peer.call("REQ", ["receipts"]).code == "bad_frame")
    }

    @Test func helloCanDeclareAService() throws {
        let bus = try TestBroker { $0.requestTimeoutMilliseconds = 100 }; defer { bus.stop() }
        let peer = try bus.peer()
        #expect(try peer.call("REQ", ["weather", #"{"method":"today"}"#]).code == "unknown_service")
        #expect(try peer.call("HELLO", [#"{"name":"w","role":"plugin","version":"1","services":["weather"]}"#]).isOK)
        #expect(try peer.call("REQ", ["weather", #"{"method":"today"}"#]).code == "timeout")
    }

    @Test func helloWithOneBadServiceNameDeclaresNone() throws {
        let bus = try TestBroker { $0.requestTimeoutMilliseconds = 100 }; defer { bus.stop() }
        let peer = try bus.peer()
        #expect(try peer.call("HELLO", [#"{"name":"w","services":["weather","Bad Name"]}"#]).code == "bad_args")
        #expect(try peer.call("REQ", ["weather", #"{"method":"today"}"#]).code == "unknown_service")
    }

    /// Plays the plugin: consumes `in/`, answers the query with a `reply` on `out`.
    private func answerNextQuery(_ plugin: RawPeer, data: String) throws -> [String: Any] {
        var query: [String: Any] = [:]
        while let frames = try plugin.receive() {
            guard frames.count == 6, frames[1] == Array("EVT".utf8) else { continue }
            query = try JSONSerialization.jsonObject(with: Data(frames[5])) as? [String: Any] ?? [:]
            break
        }
        let token = try #require(query["replyto"] as? String)
        let reply = #"{"specversion":"1.0","id":"r-\#(token)","source":"/test-plugin","type":"reply","subject":"receipts","replyto":"\#(token)","data":\#(data)}"#
        #expect(try plugin.call("PUB", [Array("out".utf8), Array(reply.utf8)]).isOK)
        return query
    }

    @Test func replyReachingOutAnswersTheRequester() async throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let plugin = try bus.peer()
        #expect(try plugin.call("CONSUME", ["receipt-reducer", "latest", "10", "in/"]).isOK)
        let requester = try bus.peer()
        let correlation = try requester.send("REQ", [Array("receipts".utf8), Array(#"{"method":"unread_counts","params":{"user_id":"bob"}}"#.utf8)])
        let query = try answerNextQuery(plugin, data: #"{"result":{"total_unread_count":3}}"#)
        #expect(query["type"] as? String == "query")
        let data = try #require(query["data"] as? [String: Any])
        #expect(data["method"] as? String == "unread_counts")
        #expect((data["params"] as? [String: Any])?["user_id"] as? String == "bob")
        let reply = try #require(try requester.receive())
        #expect(Array(reply.prefix(3)) == [Array("EB1".utf8), Array("OK".utf8), correlation])
        #expect(String(decoding: reply[3], as: UTF8.self) == #"{"total_unread_count":3}"#)
    }

    @Test func errorReplyBecomesERRWithItsCode() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let plugin = try bus.peer()
        #expect(try plugin.call("CONSUME", ["receipt-reducer", "latest", "10", "in/"]).isOK)
        let requester = try bus.peer()
        _ = try requester.send("REQ", [Array("receipts".utf8), Array(#"{"method":"channel_state","params":{"cid":"messaging:nope"}}"#.utf8)])
        _ = try answerNextQuery(plugin, data: #"{"error":{"code":"not_found","message":"no channel messaging:nope"}}"#)
        let reply = Reply(frames: try #require(try requester.receive()))
        #expect(reply.code == "not_found")
        #expect(reply.message == "no channel messaging:nope")
    }

    @Test func queryThatReachesOutUnansweredIsUnknownService() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let plugin = try bus.peer()
        #expect(try plugin.call("CONSUME", ["identity", "latest", "10", "in/"]).isOK)
        let requester = try bus.peer()
        let correlation = try requester.send("REQ", [Array("receipts".utf8), Array(#"{"method":"unread_counts","params":{"user_id":"bob"}}"#.utf8)])
        // The identity plugin passes the query on to `out` unchanged.
        var passed = false
        while !passed, let frames = try plugin.receive() {
            guard frames.count == 6, frames[1] == Array("EVT".utf8) else { continue }
            #expect(try plugin.call("PUB", [Array("out".utf8), frames[5]]).isOK)
            passed = true
        }
        let reply = Reply(frames: try #require(try requester.receive()))
        #expect(reply.frames[2] == correlation)
        #expect(reply.code == "unknown_service")
    }
}
