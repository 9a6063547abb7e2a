import Foundation
import Testing
import ZeroMQ

/// A full disk: PUB answers `busy`, nothing partial stays in the log, service resumes when space returns.
@Suite(.serialized) struct DiskFullTests {
    static func run(_ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/" + arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    static func event(_ id: String) -> [UInt8] {
        let padding = String(repeating: "p", count: 2_000)
        return Array(#"{"specversion":"1.0","id":"\#(id)","source":"/disk-test","type":"message.read","subject":"messaging:general","time":"2026-11-22T03:10:00.123Z","data":{"cid":"messaging:general","user_id":"bob","message_id":"m1","pad":"\#(padding)"}}"#.utf8)
    }

    @Test func aFullDiskAnswersBusyKeepsNothingPartialAndRecoversWhenSpaceReturns() throws {
        let mountPoint = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-disk-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        // A 4 MiB filesystem of our own (the tests run as root, as `make test` does here).
        try #require(Self.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mountPoint]) == 0, "mounting a small tmpfs failed")
        defer {
            _ = Self.run(["umount", "-l", mountPoint])
            try? FileManager.default.removeItem(atPath: mountPoint)
        }
        // Half of it taken by a filler that we delete later to give the space back.
        let filler = mountPoint + "/filler"
        #expect(FileManager.default.createFile(atPath: filler, contents: Data(repeating: 0, count: 2 * 1024 * 1024)))

        let context = try Context()
        let broker = try BrokerProcess(arguments: ["--data-dir", mountPoint + "/data", "--log-level", "error"])
        try broker.start(context: context)
        defer { broker.terminate() }
        let peer = try Socket(context: context, type: .dealer)
        defer { peer.close() }
        try peer.setLinger(0)
        try peer.setReceiveTimeout(10_000)
        try peer.connect(broker.commandEndpoint)
        func publish(_ ids: [String]) throws -> [[UInt8]] {
            try peer.send([Array("EB1".utf8), Array("PUB".utf8), Array("p".utf8), Array("in".utf8)] + ids.map(Self.event))
            return try #require(try peer.receive())
        }
        func headSeq() throws -> Int {
            try peer.send([Array("EB1".utf8), Array("STATS".utf8), Array("s".utf8)])
            let stats = try JSONSerialization.jsonObject(with: Data(try #require(try peer.receive()).last ?? [])) as? [String: Any]
            return stats?["head_seq"] as? Int ?? -1
        }

        var confirmed = 0
        var busy: [[UInt8]]?
        for batch in 0..<100 where busy == nil {
            let reply = try publish((0..<50).map { "b\(batch)-\($0)" })
            if reply[1] == Array("OK".utf8) {
                confirmed += 50
            } else {
                busy = reply
            }
        }
        let refused = try #require(busy, "the disk never filled")
        #expect(String(decoding: refused[3], as: UTF8.self) == "busy")
        #expect(String(decoding: refused[4], as: UTF8.self).contains("nothing was appended"))
        #expect(try headSeq() == confirmed, "a refused batch left nothing in the log")

        // Space comes back: the same batch now goes through, numbered right after the last confirmed one.
        try FileManager.default.removeItem(atPath: filler)
        let retried = try publish((0..<5).map { "after-\($0)" })
        #expect(retried[1] == Array("OK".utf8))
        #expect(String(decoding: retried[3], as: UTF8.self) == String(confirmed + 1))

        // And the log reads back whole after a restart.
        peer.close()
        #expect(broker.terminate() == 0)
        try broker.start(context: context)
        let again = try Socket(context: context, type: .dealer)
        defer { again.close() }
        try again.setLinger(0)
        try again.setReceiveTimeout(10_000)
        try again.connect(broker.commandEndpoint)
        try again.send([Array("EB1".utf8), Array("STATS".utf8), Array("s".utf8)])
        let stats = try JSONSerialization.jsonObject(with: Data(try #require(try again.receive()).last ?? [])) as? [String: Any]
        #expect(stats?["head_seq"] as? Int == confirmed + 5)
        #expect(!broker.log.contains("truncated"), "no torn record was left behind")
    }
}
