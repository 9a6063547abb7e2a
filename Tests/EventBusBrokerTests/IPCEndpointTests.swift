import EventBus
import EventBusBroker
import Foundation
import Logging
import Testing

/// An `ipc://` endpoint another process listens on is refused, not taken over: libzmq
/// would remove the first broker's socket file and bind anew, and the first broker,
/// still running, would silently get no new peer. A file left by a process that died
/// is no obstacle.
@Suite struct IPCEndpointTests {
    static var quiet: Logger {
        var logger = Logger(label: "test.ipc-endpoint")
        logger.logLevel = .critical
        return logger
    }

    static func config(data: String, socketBase: String) -> BrokerConfig {
        var config = BrokerConfig()
        config.dataDirectory = data
        config.commandEndpoint = "ipc://\(socketBase)-command.sock"
        config.streamEndpoint = "ipc://\(socketBase)-stream.sock"
        return config
    }

    @Test func aSecondBrokerOnTheSameIPCPathIsRefusedAndTheFirstStillAnswers() throws {
        let root = try TemporaryPath.directory("ipc-in-use")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let first = try TestBroker(directory: root + "/first") { config in
            config.commandEndpoint = "ipc://\(root)/bus-command.sock"
            config.streamEndpoint = "ipc://\(root)/bus-stream.sock"
        }
        defer { first.stop() }
        let error = #expect(throws: BrokerError.self) {
            try Broker(config: Self.config(data: root + "/second", socketBase: root + "/bus"), logger: Self.quiet)
        }
        #expect(error?.code == .endpointInUse)
        #expect(error?.description.contains("--command ipc://\(root)/bus-command.sock") == true, "\(error?.description ?? "")")
        // The first broker still has its socket file, and a new peer reaches it.
        let peer = try first.peer()
        #expect(try peer.call("PING").isOK)
    }

    @Test func theStreamEndpointIsCheckedToo() throws {
        let root = try TemporaryPath.directory("ipc-stream-in-use")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let first = try TestBroker(directory: root + "/first") { config in
            config.streamEndpoint = "ipc://\(root)/bus-stream.sock"
        }
        defer { first.stop() }
        let error = #expect(throws: BrokerError.self) {
            try Broker(config: Self.config(data: root + "/second", socketBase: root + "/bus"), logger: Self.quiet)
        }
        #expect(error?.code == .endpointInUse)
        #expect(error?.description.contains("--stream") == true, "\(error?.description ?? "")")
    }

    @Test func aSocketFileLeftByADeadProcessIsReplaced() throws {
        let root = try TemporaryPath.directory("ipc-stale")
        defer { try? FileManager.default.removeItem(atPath: root) }
        // A socket file nobody listens on: bound, then closed without unlinking.
        for name in ["bus-command.sock", "bus-stream.sock"] {
            try Self.leaveStaleSocketFile(at: root + "/" + name)
        }
        let bus = try TestBroker(directory: root + "/data") { config in
            config.commandEndpoint = "ipc://\(root)/bus-command.sock"
            config.streamEndpoint = "ipc://\(root)/bus-stream.sock"
        }
        defer { bus.stop() }
        #expect(try bus.peer().call("PING").isOK)
    }

    /// Binds a Unix socket at `path` and closes it, leaving its file behind.
    static func leaveStaleSocketFile(at path: String) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            let bytes = Array(path.utf8)
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0, "cannot bind \(path)")
        try #require(FileManager.default.fileExists(atPath: path))
    }
}

/// A short directory for socket files: a Unix socket path must fit in 108 bytes.
enum TemporaryPath {
    static func directory(_ label: String) throws -> String {
        let path = "/tmp/eb-\(label)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
