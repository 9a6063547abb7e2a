import EventBus
import EventBusTesting
import Foundation
import Testing
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// A full disk: PUB answers `busy`, nothing partial stays in the log, service resumes when space returns.
@Suite(.serialized) struct DiskFullTests {
    static func event(_ id: String) -> [UInt8] {
        let padding = String(repeating: "p", count: 2_000)
        return Array(#"{"specversion":"1.0","id":"\#(id)","source":"/disk-test","type":"message.read","subject":"messaging:general","time":"2026-11-22T03:10:00.123Z","data":{"cid":"messaging:general","user_id":"bob","message_id":"m1","pad":"\#(padding)"}}"#.utf8)
    }

    @Test func aFullDiskAnswersBusyKeepsNothingPartialAndRecoversWhenSpaceReturns() async throws {
        // A 4 MiB filesystem of our own.
        try await Tmpfs.with("eventbus-disk", size: "4m") { mountPoint in
            // Half of it taken by a filler that we delete later to give the space back.
            let filler = mountPoint + "/filler"
            #expect(FileManager.default.createFile(atPath: filler, contents: Data(repeating: 0, count: 2 * 1024 * 1024)))

            let context = try Context()
            let broker = try BrokerProcess(arguments: ["--data-dir", mountPoint + "/data", "--log-level", "error"])
            try await broker.start(context: context)
            try await broker.terminateAfter {
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
                let status = try await broker.terminate()
                #expect(status == 0)
                try await broker.start(context: context)
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
    }

    /// `publishAll` of one stream of events through a disk that fills on the way (issue 14:
    /// on an error, what was logged is a prefix of the input and the error says where to
    /// resume): the log holds exactly the events before the refused batch, in order. Here the
    /// disk stays full, so the batches in flight behind it are refused for want of room; when
    /// room comes back meanwhile, ordered publishing (`BusClientOptions.ordered`, as
    /// `eventbus publish` has it) refuses them all the same (BrokerCoreTests'
    /// `anOrderedPeersRefusedPubGoesBeforeAnyLaterOne…`, ClientStateTests' `anOrderedClient…`).
    @Test func anOrderedPublishAllThroughAFullDiskLogsAPrefixOfItsInput() async throws {
        try await Tmpfs.with("eventbus-disk-ordered", size: "4m") { mountPoint in
            #expect(FileManager.default.createFile(atPath: mountPoint + "/filler", contents: Data(repeating: 0, count: 2 * 1024 * 1024)))
            let broker = try BrokerProcess(arguments: ["--data-dir", mountPoint + "/data", "--log-level", "error"])
            let context = try Context()
            try await broker.start(context: context)
            try await broker.terminateAfter {
                var options = BusClientOptions(endpoint: broker.commandEndpoint, requestTimeout: .seconds(30))
                options.ordered = true
                let client = try BusClient(options: options)
                defer { client.close() }
                let events = (0..<2_000).map { Self.event("o\($0)") }  // 4 MB: more than the disk has
                var resumeAt: Int?
                do {
                    _ = try await client.publishAll(events, batchSize: 20, window: 8)
                } catch let error as BusError {
                    resumeAt = BusClient.failedEventRange(of: error)?.lowerBound
                    #expect(error.code == .busy)
                }
                let prefix = try #require(resumeAt, "the disk never filled")
                let stats = try JSONSerialization.jsonObject(with: Data(try await client.stats())) as? [String: Any]
                #expect(stats?["head_seq"] as? Int == prefix, "the log is exactly the events before the refused batch")
                // In order: the log's ids are the input's first `prefix`.
                let consumer = try await client.consume(name: "check", start: .earliest, credit: 1_000, prefixes: ["in/"])
                var ids: [String] = []
                for try await delivery in consumer {
                    ids.append(try EventValidator.scanEnvelope(delivery.event).id)
                    consumer.ack(delivery.seq)
                    if ids.count == prefix { break }
                }
                #expect(ids == (0..<prefix).map { "o\($0)" })
            }
        }
    }

    /// Sets or clears the immutable attribute of a directory (as `chattr +i`/`-i` do).
    ///
    /// - Returns: 0, or the errno of the ioctl (ENOTTY where the filesystem has no attributes).
    static func setImmutable(_ path: String, _ on: Bool) -> Int32 {
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        let getFlags: UInt = 0x8008_6601, setFlags: UInt = 0x4008_6602, immutable: Int32 = 0x10  // FS_IOC_GETFLAGS, FS_IOC_SETFLAGS, FS_IMMUTABLE_FL
        var flags: Int32 = 0
        guard ioctl(fd, getFlags, &flags) == 0 else { return errno }
        flags = on ? flags | immutable : flags & ~immutable
        return ioctl(fd, setFlags, &flags) == 0 ? 0 : errno
    }

    /// The read-only case: the log directory (DATA_DIR/log) stops taking new files while the broker runs.
    ///
    /// A real `mount -o remount,ro` is refused by the kernel ("mount point is busy") while the
    /// broker holds its segment open for writing, and that descriptor stays writable; what does
    /// fail under a running broker is creating the next segment. An immutable directory refuses
    /// that even to root: the PUB that needs the new segment answers `busy`, nothing of it stays,
    /// and service resumes when the directory is writable again.
    @Test func aDataDirectoryThatRefusesNewSegmentsAnswersBusyKeepsNothingAndRecovers() async throws {
        try await Tmpfs.with("eventbus-ro", size: "16m") { mountPoint in
            let dataDirectory = mountPoint + "/data"
            let segmentDirectory = dataDirectory + "/log"  // where the broker keeps its segments
            defer { _ = Self.setImmutable(segmentDirectory, false) }

            let context = try Context()
            let broker = try BrokerProcess(arguments: ["--data-dir", dataDirectory, "--segment-bytes", "65536", "--log-level", "error"])
            try await broker.start(context: context)
            try await broker.terminateAfter {
                defer { _ = Self.setImmutable(segmentDirectory, false) }
                let peer = try Socket(context: context, type: .dealer)
                defer { peer.close() }
                try peer.setLinger(0)
                try peer.setReceiveTimeout(10_000)
                try peer.connect(broker.commandEndpoint)
                func publish(_ ids: [String]) throws -> [[UInt8]] {
                    try peer.send([Array("EB1".utf8), Array("PUB".utf8), Array("p".utf8), Array("in".utf8)] + ids.map(Self.event))
                    return try #require(try peer.receive())
                }
                func stats() throws -> [String: Any] {
                    try peer.send([Array("EB1".utf8), Array("STATS".utf8), Array("s".utf8)])
                    let reply = try #require(try peer.receive())
                    return try #require(try JSONSerialization.jsonObject(with: Data(reply.last ?? [])) as? [String: Any])
                }

                var confirmed = 0
                for batch in 0..<3 {
                    #expect(try publish((0..<5).map { "w\(batch)-\($0)" })[1] == Array("OK".utf8))
                    confirmed += 5
                }
                let segmentsBefore = try #require((try stats()["log"] as? [String: Any])?["segments"] as? Int)

                let status = Self.setImmutable(segmentDirectory, true)
                try #require(status == 0, "cannot make \(segmentDirectory) immutable: errno \(status)")
                #expect(!FileManager.default.createFile(atPath: segmentDirectory + "/probe", contents: nil), "the directory still takes new files")
                // About 10 KiB a batch: the 64 KiB segment is full within a few batches, and the next one must roll.
                var busy: [[UInt8]]?
                var refusedIDs: [String] = []
                for batch in 0..<20 where busy == nil {
                    refusedIDs = (0..<5).map { "r\(batch)-\($0)" }
                    let reply = try publish(refusedIDs)
                    if reply[1] == Array("OK".utf8) { confirmed += 5 } else { busy = reply }
                }
                let afterLoop = try stats()
                let refused = try #require(busy, "no PUB was refused while the directory took no new files: \(afterLoop)")
                #expect(String(decoding: refused[3], as: UTF8.self) == "busy")
                #expect(String(decoding: refused[4], as: UTF8.self).contains("nothing was appended"))
                // Still read-only: refused again, and still nothing appended.
                #expect(String(decoding: try publish(refusedIDs)[3], as: UTF8.self) == "busy")
                var now = try stats()
                #expect(now["head_seq"] as? Int == confirmed, "a refused batch left nothing in the log")
                #expect((now["log"] as? [String: Any])?["segments"] as? Int == segmentsBefore)
                #expect((now["rejected"] as? [String: Any])?["busy"] as? Int == 2)
                #expect(broker.process?.isRunning == true)

                // Writable again: the next PUB rolls the segment and is numbered right after the last confirmed one.
                #expect(Self.setImmutable(segmentDirectory, false) == 0)
                let retried = try publish(refusedIDs)
                #expect(retried[1] == Array("OK".utf8))
                #expect(String(decoding: retried[3], as: UTF8.self) == String(confirmed + 1))
                now = try stats()
                #expect((now["log"] as? [String: Any])?["segments"] as? Int == segmentsBefore + 1)

                // And the log reads back whole after a restart.
                peer.close()
                let stopped = try await broker.terminate()
                #expect(stopped == 0)
                try await broker.start(context: context)
                let again = try Socket(context: context, type: .dealer)
                defer { again.close() }
                try again.setLinger(0)
                try again.setReceiveTimeout(10_000)
                try again.connect(broker.commandEndpoint)
                try again.send([Array("EB1".utf8), Array("STATS".utf8), Array("s".utf8)])
                let restarted = try JSONSerialization.jsonObject(with: Data(try #require(try again.receive()).last ?? [])) as? [String: Any]
                #expect(restarted?["head_seq"] as? Int == confirmed + 5)
                #expect(!broker.log.contains("truncated"), "no torn record was left behind")
            }
        }
    }
}
