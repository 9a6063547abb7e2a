import Foundation
import ZeroMQ

/// Endpoints no other test uses: ipc sockets in a test's own directory, and loopback
/// TCP ports the system hands out.
public enum EphemeralEndpoint {
    /// `ipc://<directory>/<name>.sock`.
    public static func ipc(in directory: URL, _ name: String) -> String {
        "ipc://\(directory.path)/\(name).sock"
    }

    /// `count` distinct free loopback ports, found by binding port 0 (`*`) and letting go:
    /// for a process that must be told its port before it starts.
    public static func freePorts(_ count: Int) throws -> [Int] {
        let context = try Context()
        var sockets: [Socket] = []
        defer { for socket in sockets { socket.close() } }
        return try (0..<count).map { _ in
            let socket = try Socket(context: context, type: .router)
            sockets.append(socket)
            try socket.bind("tcp://127.0.0.1:*")
            let endpoint = try socket.lastEndpoint
            guard let port = endpoint.split(separator: ":").last.flatMap({ Int($0) }) else {
                throw ProcessError("no port in \(endpoint)")
            }
            return port
        }
    }

    /// One free loopback port (see ``freePorts(_:)``).
    public static func freePort() throws -> Int {
        try freePorts(1)[0]
    }
}
