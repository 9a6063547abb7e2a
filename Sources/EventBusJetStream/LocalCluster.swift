import Foundation
import Logging
import NATS
import Synchronization

/// N nats-server processes on loopback, one per ``NodeConfig``: their configuration files
/// written, the processes started, and JetStream waited for until it has a meta leader.
///
/// ``stop()`` sends every server SIGTERM and waits for it (SIGKILL after a grace period);
/// so does dropping the value. Used by `eventbus cluster up` and by the tests.
public final class LocalCluster: Sendable {
    public let config: ClusterConfig
    /// The binary the servers run.
    public let binary: String
    private let processes: Mutex<[String: Process]>
    private let logger: Logger

    /// Writes each node's configuration and starts its server; does not wait for them.
    ///
    /// - Throws: ``ClusterError/cannotWrite(path:reason:)`` or ``ClusterError/cannotStart(node:reason:)``;
    ///   the servers already started are stopped first.
    public init(config: ClusterConfig, binary: String, logger: Logger = Logger(label: "eventbus.cluster")) throws(ClusterError) {
        self.config = config
        self.binary = binary
        self.logger = logger
        self.processes = Mutex([:])
        for file in config.credentialFiles {
            do {
                let directory = URL(fileURLWithPath: file.path).deletingLastPathComponent().path
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
                FileManager.default.createFile(atPath: file.path, contents: nil, attributes: [.posixPermissions: 0o600])
                try Data(file.text.utf8).write(to: URL(fileURLWithPath: file.path))
            } catch {
                throw .cannotWrite(path: file.path, reason: "\(error)")
            }
        }
        for node in config.nodes {
            do {
                try FileManager.default.createDirectory(atPath: node.storeDirectory, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
                try Data(node.configText.utf8).write(to: URL(fileURLWithPath: node.configPath))
            } catch {
                stop()
                throw .cannotWrite(path: node.configPath, reason: "\(error)")
            }
            do {
                try start(node)
            } catch {
                stop()
                throw error
            }
        }
    }

    deinit { stop() }

    /// The client URLs, in node order, as the gateways connect (with the gateway user's
    /// credentials when the cluster has users).
    public var clientURLs: [String] { config.clientURLs(for: .gateway) }

    private func start(_ node: NodeConfig) throws(ClusterError) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-c", node.configPath]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw .cannotStart(node: node.name, reason: "\(binary): \(error)")
        }
        logger.info("nats-server started", metadata: [
            "nats.node": "\(node.name)", "nats.pid": "\(process.processIdentifier)", "nats.url": "\(node.clientURL)",
            "nats.config": "\(node.configPath)",
        ])
        processes.withLock { $0[node.name] = process }
    }

    /// Waits until JetStream answers with a meta leader on every node, or `timeout` passes.
    ///
    /// Asks each node for the info of a stream that does not exist: only a JetStream with a
    /// meta leader answers "not found"; without one the server answers that JetStream is
    /// not available, or nothing.
    ///
    /// - Throws: ``ClusterError/nodeExited(node:status:log:)`` when a server died, or
    ///   ``ClusterError/noLeader(urls:waited:lastError:)`` after `timeout`.
    public func waitForLeader(timeout: Duration = .seconds(60)) throws(ClusterError) {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var pending = config.nodes
        var lastError = "no answer yet"
        while true {
            try checkRunning()
            pending = pending.filter { node in
                do {
                    try Self.probe(config.users.map { $0.urls([node.clientURL], for: .admin)[0] } ?? node.clientURL,
                                   trusting: config.tls?.authorities)
                    return false
                } catch {
                    lastError = "\(node.name): \(error)"
                    return true
                }
            }
            if pending.isEmpty { break }
            guard clock.now < deadline else { throw .noLeader(urls: config.clientURLs, waited: timeout, lastError: lastError) }
            Thread.sleep(forTimeInterval: 0.1)
        }
        logger.info("JetStream has a meta leader", metadata: [
            "nats.urls": "\(config.clientURLs.joined(separator: ","))", "nats.users": "\(config.users != nil)",
        ])
    }

    /// One question to one node; returns when a meta leader answered it.
    static func probe(_ url: String, trusting authorities: String? = nil) throws(NATSError) {
        let connection = try Connection(ConnectOptions(servers: [url], name: "eventbus-cluster-probe",
                                                       timeout: .milliseconds(500), allowReconnect: false,
                                                       trustedCertificates: authorities))
        defer { connection.close() }
        let js = try JetStream(connection: connection, options: JetStreamOptions(requestTimeout: .seconds(1)))
        do {
            _ = try js.streamInfo("EVENTBUS_LEADER_PROBE")
        } catch where error.isNotFound {
            return
        }
    }

    /// Throws when a node's process has exited.
    public func checkRunning() throws(ClusterError) {
        let exited = processes.withLock { processes in processes.first { !$0.value.isRunning } }
        guard let (name, process) = exited else { return }
        let node = config.nodes.first { $0.name == name }
        let log = node.flatMap { try? String(contentsOfFile: $0.logPath, encoding: .utf8) } ?? ""
        throw .nodeExited(node: name, status: process.terminationStatus, log: String(log.suffix(600)))
    }

    /// Starts node `name` again (after it died or was killed), with its configuration and
    /// store as they are.
    ///
    /// - Throws: ``ClusterError/cannotStart(node:reason:)``.
    public func restart(_ name: String) throws(ClusterError) {
        guard let node = config.nodes.first(where: { $0.name == name }) else {
            throw .cannotStart(node: name, reason: "no such node")
        }
        try start(node)
    }

    /// The process of node `name` (`n1`…), for tests that kill one.
    public func processIdentifier(of name: String) -> Int32? {
        processes.withLock { $0[name]?.processIdentifier }
    }

    /// Stops every server: SIGTERM, and SIGKILL for one still there after `grace`. Safe to
    /// call more than once.
    public func stop(grace: Duration = .seconds(10)) {
        let running = processes.withLock { processes in
            defer { processes.removeAll() }
            return processes
        }
        for (_, process) in running where process.isRunning { process.terminate() }
        let clock = ContinuousClock()
        let deadline = clock.now + grace
        for (name, process) in running.sorted(by: { $0.key < $1.key }) {
            while process.isRunning && clock.now < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if process.isRunning {
                logger.warning("nats-server ignored SIGTERM; killing it", metadata: ["nats.node": "\(name)"])
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            logger.info("nats-server stopped", metadata: ["nats.node": "\(name)", "nats.status": "\(process.terminationStatus)"])
        }
    }
}
