/// A local NATS cluster for the JetStream backend, as values: which servers, on which
/// loopback ports, with their stores where (`eventbus cluster up`, docs/scale-out.md).
///
/// ``nodes`` renders each server's configuration file; nothing here starts a process.
public struct ClusterConfig: Sendable, Equatable {
    /// The cluster's name in every server's `cluster` block.
    public static let clusterName = "eventbus"
    /// The first client port by default; route ports are 2000 higher (NATS's 4222 and 6222).
    public static let defaultBasePort = 4222
    /// The gap between a node's client port and its route port with `--base-port`.
    public static let routePortOffset = 2000
    /// The most servers `cluster up` starts.
    public static let maxNodes = 15

    /// Where every node keeps its configuration, log and store: `DIR/nK/`.
    public var dataDirectory: String
    /// The address every server listens on.
    public var host: String
    /// One client port per node, in node order.
    public var clientPorts: [Int]
    /// One route (cluster) port per node, in node order; unused with one node.
    public var routePorts: [Int]
    /// Whether each server fsyncs every write before it acks it (`sync_interval: always`):
    /// the parity with the broker's `--fsync always`.
    public var syncAlways: Bool
    /// The users per role every server accepts, or `nil` for a cluster open to any client
    /// on its address (the tests' clusters).
    public var users: ClusterUsers?
    /// TLS to clients and between servers, or `nil` for plain TCP (one machine's loopback).
    public var tls: ClusterTLS?

    /// A cluster of `nodes` servers on `basePort`, `basePort + 1`, … with route ports
    /// ``routePortOffset`` higher.
    ///
    /// - Throws: ``ClusterError/invalidNodeCount(_:)`` or ``ClusterError/invalidPort(_:)``.
    public init(nodes: Int, dataDirectory: String, basePort: Int = ClusterConfig.defaultBasePort,
                host: String = "127.0.0.1", syncAlways: Bool = false, users: ClusterUsers? = nil,
                tls: ClusterTLS? = nil) throws(ClusterError) {
        guard (1...Self.maxNodes).contains(nodes) else { throw .invalidNodeCount(nodes) }
        try self.init(dataDirectory: dataDirectory, clientPorts: (0..<nodes).map { basePort + $0 },
                      routePorts: (0..<nodes).map { basePort + Self.routePortOffset + $0 }, host: host, syncAlways: syncAlways,
                      users: users, tls: tls)
    }

    /// A cluster with the ports given, one client and one route port per node.
    ///
    /// - Throws: ``ClusterError/invalidNodeCount(_:)`` when the lists are empty, too long or
    ///   of different lengths; ``ClusterError/invalidPort(_:)`` for a port outside 1–65535
    ///   or used twice.
    public init(dataDirectory: String, clientPorts: [Int], routePorts: [Int], host: String = "127.0.0.1",
                syncAlways: Bool = false, users: ClusterUsers? = nil, tls: ClusterTLS? = nil) throws(ClusterError) {
        guard (1...Self.maxNodes).contains(clientPorts.count), routePorts.count == clientPorts.count else {
            throw .invalidNodeCount(clientPorts.count)
        }
        let ports = clientPorts + (clientPorts.count > 1 ? routePorts : [])
        if let bad = ports.first(where: { !(1...65_535).contains($0) }) { throw .invalidPort(bad) }
        if let twice = ports.first(where: { port in ports.filter { $0 == port }.count > 1 }) { throw .invalidPort(twice) }
        self.dataDirectory = dataDirectory
        self.host = host
        self.clientPorts = clientPorts
        self.routePorts = routePorts
        self.syncAlways = syncAlways
        self.users = users
        self.tls = tls
    }

    /// Every node, in order (`n1`, `n2`, …).
    public var nodes: [NodeConfig] {
        let routes = clientPorts.count > 1 ? routePorts.map { "nats-route://\(host):\($0)" } : []
        return clientPorts.indices.map { index in
            let name = "n\(index + 1)"
            let directory = dataDirectory.hasSuffix("/") ? "\(dataDirectory)\(name)" : "\(dataDirectory)/\(name)"
            return NodeConfig(
                name: name, host: host, clientPort: clientPorts[index],
                routePort: routes.isEmpty ? nil : routePorts[index], routes: routes, directory: directory,
                syncAlways: syncAlways, nodeCount: clientPorts.count, users: users, tls: tls)
        }
    }

    /// The client URLs, in node order, without credentials.
    public var clientURLs: [String] { clientPorts.map { "nats://\(host):\($0)" } }

    /// The client URLs as `role` connects: with its user and password when the cluster has
    /// ``users``.
    public func clientURLs(for role: ClusterUsers.Role) -> [String] {
        users.map { $0.urls(clientURLs, for: role) } ?? clientURLs
    }

    /// The gateway's URLs as one `--backend` value: `nats://127.0.0.1:4222,nats://127.0.0.1:4223,…`
    /// (`nats://gateway:PASSWORD@127.0.0.1:4222,…` with ``users``).
    public var backendValue: String { clientURLs(for: .gateway).joined(separator: ",") }

    /// `DATA/users/USER.url`: each role's `--backend` value, when the cluster has ``users``.
    public var credentialFiles: [(path: String, text: String)] {
        guard let users else { return [] }
        let directory = dataDirectory.hasSuffix("/") ? "\(dataDirectory)users" : "\(dataDirectory)/users"
        return users.roles.map { role in
            ("\(directory)/\(role.user).url", users.urls(clientURLs, for: role).joined(separator: ",") + "\n")
        }
    }
}

/// One server of a ``ClusterConfig``: its ports, its directory and its configuration file.
public struct NodeConfig: Sendable, Equatable {
    /// The server's name (`server_name`), `n1`…
    public var name: String
    public var host: String
    public var clientPort: Int
    /// The route port, `nil` for a single server (no `cluster` block).
    public var routePort: Int?
    /// Every node's route URL, this one's included (NATS ignores a route to itself).
    public var routes: [String]
    /// `DATA/nK`: the configuration file, the log and the JetStream store.
    public var directory: String
    public var syncAlways: Bool
    /// The cluster's size, for the file's comment.
    public var nodeCount: Int
    /// The users per role, or `nil` for no `authorization` block.
    public var users: ClusterUsers? = nil
    /// TLS to clients and between the servers, or `nil` for plain TCP.
    public var tls: ClusterTLS? = nil

    public var configPath: String { "\(directory)/nats-server.conf" }
    public var logPath: String { "\(directory)/server.log" }
    public var storeDirectory: String { "\(directory)/store" }
    public var clientURL: String { "nats://\(host):\(clientPort)" }

    /// The configuration file's text.
    public var configText: String {
        var lines = [
            "# Written by eventbus cluster up: node \(name) of \(nodeCount).",
            "server_name: \(name)",
            "listen: \(host):\(clientPort)",
            "log_file: \(Self.quoted(logPath))",
            "jetstream {",
            "  store_dir: \(Self.quoted(storeDirectory))",
        ]
        // Every write fsynced before its ack: an ack means "on disk on a majority".
        if syncAlways { lines.append("  sync_interval: always") }
        lines.append("}")
        // TLS required of every client (libnats: `trustedCertificates`).
        if let tls { lines += tls.block(indent: 0) }
        if let routePort {
            lines.append("cluster {")
            lines.append("  name: \(ClusterConfig.clusterName)")
            lines.append("  listen: \(host):\(routePort)")
            lines.append("  routes: [")
            lines += routes.map { "    \($0)" }
            lines.append("  ]")
            // Routes over TLS too: each server checks the others' certificates.
            if let tls { lines += tls.block(indent: 2) }
            lines.append("}")
        }
        // Users per role: only gateways write to `in`, each plugin only to its own stage.
        if let users { lines.append(users.authorizationBlock) }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A string in the configuration syntax's double quotes.
    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
