import EventBusJetStream
import Foundation
import Glibc
import Logging

/// A real local cluster for a test: `nodes` nats-servers on loopback ports the system
/// picked, in a temporary directory; stopped and removed when the value goes.
final class TestCluster: Sendable {
    let cluster: LocalCluster
    let directory: String

    init(nodes: Int, syncAlways: Bool = false, users: ClusterUsers? = nil, tls: ClusterTLS? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-js-\(UUID().uuidString.prefix(8))").path
        let ports = try FreePorts.take(2 * nodes)
        let config = try ClusterConfig(dataDirectory: directory, clientPorts: Array(ports.prefix(nodes)),
                                       routePorts: Array(ports.suffix(nodes)), syncAlways: syncAlways, users: users, tls: tls)
        cluster = try LocalCluster(config: config, binary: try ServerBinary.find(), logger: Logger(label: "test.cluster"))
        try cluster.waitForLeader(timeout: .seconds(60))
    }

    deinit {
        cluster.stop(grace: .seconds(5))
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The URLs as the gateways connect (with the gateway user's credentials when the
    /// cluster has users).
    var urls: [String] { cluster.clientURLs }

    /// The URLs as `role` connects.
    func urls(for role: ClusterUsers.Role) -> [String] { cluster.config.clientURLs(for: role) }

    /// A directory of the test's own beside the servers' (`name` inside the cluster's
    /// directory), made now and removed with the cluster.
    func scratchDirectory(_ name: String) throws -> String {
        let path = directory + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// Loopback ports nothing listens on now: each bound to port 0 and closed.
enum FreePorts {
    static func take(_ count: Int) throws -> [Int] {
        var sockets: [Int32] = []
        defer { for fd in sockets { close(fd) } }
        var ports: [Int] = []
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
            sockets.append(fd)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { throw TestFailure("bind: errno \(errno)") }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return ports
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
