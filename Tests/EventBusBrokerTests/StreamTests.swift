import EventBus
import Foundation
import Testing
import ZeroMQ

/// The stream socket: `out` and `diag` only, three frames, no private types.
@Suite struct StreamTests {
    @Test func streamCarriesOutAndDiagAsThreeFramesWithABinarySeq() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let sub = try bus.subscriber([""])
        let peer = try bus.peer()
        #expect(try peer.call("PUB", [Array("in".utf8), Events.read()]).values == ["1"])
        #expect(try peer.call("PUB", [Array("plugin-a".utf8), Events.read()]).values == ["2"])
        #expect(try peer.call("PUB", [Array("out".utf8), Events.read()]).values == ["3"])
        let diag = Events.make(type: "receipt.rejected", subject: "messaging:general",
                               data: #"{"seq":1,"type":"message.read","cid":"messaging:general","reason":"unknown_channel"}"#)
        #expect(try peer.call("PUB", [Array("diag".utf8), diag]).values == ["4"])
        let first = try #require(try sub.receive())
        #expect(first.count == 3)
        #expect(String(decoding: first[0], as: UTF8.self) == "out/messaging:general/message.read")
        #expect(first[1] == [0, 0, 0, 0, 0, 0, 0, 3])
        let second = try #require(try sub.receive())
        #expect(String(decoding: second[0], as: UTF8.self) == "diag/messaging:general/receipt.rejected")
        #expect(second[1] == [0, 0, 0, 0, 0, 0, 0, 4])
        #expect((try peer.call("STATS").json["diag"] as? [String: Int]) == ["receipt.rejected": 1])
    }

    @Test func privateTypesNeverLeaveOnTheStream() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let sub = try bus.subscriber(["out/"])
        let peer = try bus.peer()
        let channel = Events.make(type: "channel.created", subject: "messaging:general",
                                  data: #"{"cid":"messaging:general","members":["bob"]}"#)
        #expect(try peer.call("PUB", [Array("out".utf8), Events.userUpdated("bob", readReceipts: false), channel, Events.read()]).values == ["1", "2", "3"])
        let only = try #require(try sub.receive())
        #expect(only[1] == [0, 0, 0, 0, 0, 0, 0, 3])
    }
}
