import EventBusTesting
import Foundation
import Testing
import ZeroMQ

/// Process-level durability: SIGKILL the broker, restart it, find every confirmed event.
@Suite(.serialized) struct CrashRecoveryTests {
    static func event(_ id: String) -> [UInt8] {
        Array(#"{"specversion":"1.0","id":"\#(id)","source":"/crash-test","type":"message.read","subject":"messaging:general","data":{"cid":"messaging:general","user_id":"bob","message_id":"m1"}}"#.utf8)
    }

    /// Every event in stage `in`, as (SEQ, id), read back with a durable consumer.
    static func readBack(_ context: Context, _ endpoint: String, expecting count: Int) throws -> [(UInt64, String)] {
        let peer = try Socket(context: context, type: .dealer)
        defer { peer.close() }
        try peer.setLinger(0)
        try peer.setReceiveTimeout(5_000)
        try peer.connect(endpoint)
        try peer.send([Array("EB1".utf8), Array("CONSUME".utf8), Array("c".utf8), Array("reader".utf8),
                       Array("earliest".utf8), Array("65536".utf8), Array("in/".utf8)])
        var seen: [(UInt64, String)] = []
        while seen.count < count, let frames = try peer.receive() {
            guard frames.count == 6, frames[1] == Array("EVT".utf8) else { continue }
            let seq = UInt64(String(decoding: frames[3], as: UTF8.self)) ?? 0
            let object = try JSONSerialization.jsonObject(with: Data(frames[5])) as? [String: Any]
            seen.append((seq, object?["id"] as? String ?? ""))
        }
        return seen
    }

    /// docs/operations.md, "Fsync policy": every policy writes a PUB to the file before it is
    /// confirmed, so a crash of the broker process alone never loses a confirmed event.
    @Test(arguments: ["always", "periodic", "off"])
    func everyConfirmedEventSurvivesSIGKILL(fsync: String) async throws {
        let context = try Context()
        let broker = try BrokerProcess(arguments: ["--fsync", fsync])
        try await broker.start(context: context)
        let publisher = try Socket(context: context, type: .dealer)
        try publisher.setLinger(0)
        try publisher.setReceiveTimeout(2_000)
        try publisher.connect(broker.commandEndpoint)

        // Publish batches of 50 and kill the broker while PUBs are in flight.
        var confirmed: [String: UInt64] = [:]
        var batch = 0
        var inFlight: [String: [String]] = [:]
        while confirmed.count < 3_000 {
            let ids = (0..<50).map { "e\(batch)-\($0)" }
            inFlight["\(batch)"] = ids
            try publisher.send([Array("EB1".utf8), Array("PUB".utf8), Array("\(batch)".utf8), Array("in".utf8)] + ids.map(Self.event))
            batch += 1
            if inFlight.count >= 4, let reply = try publisher.receive() {
                let corr = String(decoding: reply[2], as: UTF8.self)
                #expect(reply[1] == Array("OK".utf8))
                for (id, seq) in zip(inFlight[corr] ?? [], reply.dropFirst(3)) {
                    confirmed[id] = UInt64(String(decoding: seq, as: UTF8.self))
                }
                inFlight[corr] = nil
            }
        }
        try await broker.kill()
        publisher.close()

        try await broker.start(context: context)
        try await broker.terminateAfter {
            let stored = try Self.readBack(context, broker.commandEndpoint, expecting: confirmed.count)
            let byID = Dictionary(stored.map { ($0.1, $0.0) }, uniquingKeysWith: { first, _ in first })
            let missing = confirmed.filter { byID[$0.key] != $0.value }
            #expect(missing.isEmpty, "confirmed events missing or moved after SIGKILL: \(missing.count)")
            #expect(stored.map(\.0) == Array(1...UInt64(stored.count)), "SEQs are contiguous from 1")
        }
    }

    /// A torn tail is cut, reported, and its SEQ given to the next event, whatever the policy.
    @Test(arguments: ["always", "periodic", "off"])
    func tornLastRecordIsTruncatedAndReported(fsync: String) async throws {
        let context = try Context()
        let broker = try BrokerProcess(arguments: ["--fsync", fsync])
        try await broker.start(context: context)
        let peer = try Socket(context: context, type: .dealer)
        try peer.setLinger(0)
        try peer.setReceiveTimeout(5_000)
        try peer.connect(broker.commandEndpoint)
        try peer.send([Array("EB1".utf8), Array("PUB".utf8), Array("1".utf8), Array("in".utf8)] + (0..<10).map { Self.event("t\($0)") })
        let reply = try #require(try peer.receive())
        #expect(reply.count == 13)
        peer.close()
        let status = try await broker.terminate()
        #expect(status == 0)

        // Tear the last record: cut its final 7 bytes off.
        let logDirectory = URL(fileURLWithPath: broker.dataDirectory).appendingPathComponent("log")
        let segment = try #require(try FileManager.default.contentsOfDirectory(atPath: logDirectory.path).filter { $0.hasSuffix(".seg") }.sorted().last)
        let path = logDirectory.appendingPathComponent(segment).path
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(truncate(path, off_t(size - 7)) == 0)

        try await broker.start(context: context)
        try await broker.terminateAfter {
            #expect(broker.log.lowercased().contains("truncat"), "the broker reports the truncation")
            let stored = try Self.readBack(context, broker.commandEndpoint, expecting: 9)
            #expect(stored.map(\.1) == (0..<9).map { "t\($0)" })
            // The next event takes the place of the torn one.
            let again = try Socket(context: context, type: .dealer)
            defer { again.close() }
            try again.setLinger(0)
            try again.setReceiveTimeout(5_000)
            try again.connect(broker.commandEndpoint)
            try again.send([Array("EB1".utf8), Array("PUB".utf8), Array("2".utf8), Array("in".utf8), Self.event("t9")])
            #expect(try again.receive()?.last == Array("10".utf8))
        }
    }
}
