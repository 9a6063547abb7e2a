import EventBus
import EventBusBroker
import Foundation
import Logging
import Testing

/// The data directory is the broker's user's alone: created 0700 with 0600
/// files whatever the umask, and refused when group or others may use it.
@Suite(.serialized) struct DataDirectoryTests {
    /// The permission bits of `path`.
    static func mode(_ path: String) throws -> mode_t {
        var status = stat()
        try #require(stat(path, &status) == 0, "cannot stat \(path)")
        return status.st_mode & 0o7777
    }

    /// A fresh path under the temporary directory, not created.
    static func freshPath(_ label: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-\(label)-\(UUID().uuidString.prefix(8))").path
    }

    static var quiet: Logger {
        var logger = Logger(label: "test.data-directory")
        logger.logLevel = .critical
        return logger
    }

    @Test func underUmask022TheDataDirectoryItsFoldersAndFilesAreTheOwnersOnly() throws {
        let previous = umask(0o022)
        defer { umask(previous) }
        let root = Self.freshPath("modes")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let data = root + "/data"
        let bus = try TestBroker(directory: data)
        try ConsumerTests.publish(bus, 3)
        let peer = try bus.peer()
        #expect(try peer.call("CONSUME", ["c", "earliest", "10", "in/"]).isOK)
        try peer.send("ACK", [Array("c".utf8), Array("3".utf8)])
        #expect(try peer.call("PING").isOK)
        bus.stop()  // commits the log and saves the offsets

        #expect(try Self.mode(root) == 0o700, "a missing parent is created private too")
        #expect(try Self.mode(data) == 0o700)
        #expect(try Self.mode(data + "/log") == 0o700)
        let segments = try FileManager.default.contentsOfDirectory(atPath: data + "/log")
        #expect(!segments.isEmpty)
        for segment in segments {
            #expect(try Self.mode(data + "/log/" + segment) == 0o600, "\(segment)")
        }
        #expect(try Self.mode(data + "/consumers.json") == 0o600)
    }

    @Test func aDataDirectoryOpenToGroupOrOthersIsRefusedNamingTheWayOut() throws {
        let root = Self.freshPath("shared")
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(mkdir(root, 0o700) == 0)
        for mode: mode_t in [0o755, 0o750, 0o701, 0o770, 0o707] {
            let data = root + "/data-\(String(mode, radix: 8))"
            #expect(mkdir(data, 0o700) == 0 && chmod(data, mode) == 0)
            var config = BrokerConfig()
            config.dataDirectory = data
            config.commandEndpoint = "tcp://127.0.0.1:*"
            config.streamEndpoint = "tcp://127.0.0.1:*"
            let error = #expect(throws: BrokerError.self) { try Broker(config: config, logger: Self.quiet) }
            let message = error?.description ?? ""
            #expect(message.contains("0\(String(mode, radix: 8))"), "\(message)")
            #expect(message.contains("chmod 700 \(data)"), "\(message)")
            #expect(message.contains("--allow-shared-data-dir"), "\(message)")
            #expect(!FileManager.default.fileExists(atPath: data + "/log"), "nothing is written before the refusal")
            #expect(try Self.mode(data) == mode, "the directory is left as it was")
        }
    }

    @Test func theOptionAllowsASharedDataDirectoryAndLeavesItsMode() throws {
        let root = Self.freshPath("allowed")
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(mkdir(root, 0o700) == 0 && chmod(root, 0o755) == 0)
        let bus = try TestBroker(directory: root) { $0.allowSharedDataDirectory = true }
        try ConsumerTests.publish(bus, 1)
        bus.stop()
        #expect(try Self.mode(root) == 0o755)
    }

    @Test func aPrivateDataDirectoryThatExistsIsUsedAsItIs() throws {
        let root = Self.freshPath("private")
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(mkdir(root, 0o700) == 0)
        let bus = try TestBroker(directory: root)
        try ConsumerTests.publish(bus, 1)
        bus.stop()
        #expect(try Self.mode(root) == 0o700)
    }
}
