import EventBus
import Foundation
import Testing
import ZeroMQ

/// Framing, verbs, HELLO, PING and STATS, and the broker staying up after bad input.
@Suite struct CommandProtocolTests {
    @Test func pingIsAnsweredWithOKAndTheSameCorrelation() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        let correlation = try peer.send("PING")
        let reply = try #require(try peer.receive())
        #expect(reply == [Array("EB1".utf8), Array("OK".utf8), correlation])
    }

    /// docs/protocol.md "Limits": a frame over 8 MiB on the command socket drops the
    /// connection without a reply; the broker goes on serving everyone else.
    @Test func aFrameOver8MiBDropsTheConnectionWithoutAReply() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let socket = try Socket(context: bus.context, type: .dealer)
        try socket.setLinger(0)
        try socket.setReconnectInterval(60_000)  // so that the drop is not hidden by a reconnect
        let monitor = try socket.monitor(events: [.connected, .disconnected])
        try monitor.setReceiveTimeout(20_000)
        defer {
            socket.stopMonitor()
            monitor.close()
            socket.close()
        }
        try socket.connect(bus.broker.commandEndpoint)
        guard case .connected? = try monitor.receiveEvent() else {
            Issue.record("the peer did not connect")
            return
        }
        let huge = [UInt8](repeating: UInt8(ascii: "a"), count: 8 * 1024 * 1024 + 1)
        try socket.send([Array("EB1".utf8), Array("PUB".utf8), Array("big".utf8), Array("in".utf8), huge])
        // The broker drops the connection: the peer sees it go, and no reply came before.
        guard case .disconnected? = try monitor.receiveEvent() else {
            Issue.record("the connection was not dropped")
            return
        }
        #expect(try socket.receive(dontWait: true) == nil)
        // Everyone else is served, and nothing was logged.
        let other = try bus.peer()
        #expect(try other.call("PING").isOK)
        #expect(try other.call("STATS").json["head_seq"] as? Int == 0)
    }

    @Test func wrongSignatureIsBadFrame() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        try peer.sendRaw([Array("EB2".utf8), Array("PING".utf8), Array("x".utf8)])
        let reply = Reply(frames: try #require(try peer.receive()))
        #expect(reply.code == "bad_frame")
        #expect(reply.message.contains("signature"))
        #expect(try peer.call("PING").isOK)
    }

    @Test func missingCorrelationFrameIsBadFrame() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        try peer.sendRaw([Array("EB1".utf8), Array("PING".utf8)])
        let reply = Reply(frames: try #require(try peer.receive()))
        #expect(reply.code == "bad_frame")
        #expect(try peer.call("PING").isOK)
    }

    @Test func correlationOver64BytesIsBadFrame() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        try peer.sendRaw([Array("EB1".utf8), Array("PING".utf8), [UInt8](repeating: 65, count: 65)])
        let reply = Reply(frames: try #require(try peer.receive()))
        #expect(reply.code == "bad_frame")
        #expect(reply.message.contains("CORR"))
        try peer.sendRaw([Array("EB1".utf8), Array("PING".utf8), [UInt8](repeating: 65, count: 64)])
        #expect(Reply(frames: try #require(try peer.receive())).isOK)
    }

    @Test func unknownVerbIsBadVerb() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        let reply = try peer.call("FROB")
        #expect(reply.code == "bad_verb")
        #expect(reply.message.contains("FROB"))
        #expect(try peer.call("OK").code == "bad_verb")
        #expect(try peer.call("PING").isOK)
    }

    @Test func helloReportsVersionStagesAndLimits() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let reply = try bus.peer().call("HELLO", [#"{"name":"t","role":"backend","version":"1"}"#])
        #expect(reply.isOK)
        #expect(reply.json["stages"] as? [String] == ["in", "plugin-a", "out", "diag"])
        let limits = try #require(reply.json["limits"] as? [String: Any])
        #expect(limits["max_event_bytes"] as? Int == 65_536)
        #expect(limits["max_batch_events"] as? Int == 1_000)
    }

    @Test func aPeerThatAsksForCompactOKGetsEverySeqOfAPubInOneFrame() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        let first = Events.read(message: "m1")
        // Without asking: one frame per SEQ (docs/protocol.md, "PUB").
        #expect(try peer.call("PUB", [Array("in".utf8), first, Events.read(message: "m2")]).values == ["1", "2"])
        let hello = try peer.call("HELLO", [#"{"name":"t","role":"backend","version":"1","compact_ok":true}"#])
        #expect(hello.json["compact_ok"] as? Bool == true)
        #expect((hello.json["features"] as? [String])?.contains("compact_ok") == true)
        // A repeat keeps its original SEQ in the frame, in place.
        #expect(try peer.call("PUB", [Array("in".utf8), Events.read(message: "m3"), first, Events.read(message: "m4")]).values
            == ["3 1 4"])
        #expect(try peer.call("PUB", [Array("in".utf8), Events.read(message: "m5")]).values == ["5"])
        // Another connection is not affected; and the option can be turned off.
        #expect(try bus.peer().call("PUB", [Array("in".utf8), Events.read(), Events.read()]).values == ["6", "7"])
        #expect(try peer.call("HELLO", [#"{"compact_ok":false}"#]).json["compact_ok"] as? Bool == false)
        #expect(try peer.call("PUB", [Array("in".utf8), Events.read(), Events.read()]).values == ["8", "9"])
        #expect(try peer.call("HELLO", [#"{"compact_ok":"yes"}"#]).code == "bad_args")
    }

    @Test func helloWithInvalidJSONIsBadJSON() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        #expect(try peer.call("HELLO", ["{nope"]).code == "bad_json")
        #expect(try peer.call("HELLO", [[0xff, 0xfe]]).code == "bad_json")
        #expect(try peer.call("PING").isOK)
    }

    @Test func statsCarriesTheRequiredFields() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let peer = try bus.peer()
        _ = try peer.call("PUB", [Array("in".utf8), Events.read()])
        _ = try peer.call("FROB")
        let stats = try peer.call("STATS").json
        #expect(stats["head_seq"] as? Int == 1)
        #expect((stats["stages"] as? [String: Int])?["in"] == 1)
        #expect((stats["stages"] as? [String: Int])?["out"] == 0)
        #expect(stats["consumers"] is [Any])
        #expect((stats["rejected"] as? [String: Int])?["bad_verb"] == 1)
        #expect(stats["dedup_hits"] as? Int == 0)
    }

    @Test func garbageFromOnePeerDoesNotDisturbAnother() throws {
        let bus = try TestBroker(); defer { bus.stop() }
        let good = try bus.peer()
        let bad = try bus.peer()
        for frames in [[[UInt8]()], [Array("EB1".utf8)], [[0, 1, 2], [3]], [Array("EB1".utf8), Array("PUB".utf8), [], [0xff]]] {
            try bad.sendRaw(frames)
        }
        #expect(try good.call("PUB", [Array("in".utf8), Events.read()]).values == ["1"])
        #expect(try good.call("PING").isOK)
    }
}
