import EventBus
import EventBusBroker
import Foundation
import Logging
import Synchronization
import ZeroMQ

/// `eventbus up`: the broker plus the pipeline's plugin processes, supervised.
///
/// Starts the broker, then each plugin with `--name --input --output
/// --command --data-dir`; restarts a plugin that exits or is killed (with
/// backoff, loud about crash loops); logs one ready line once every stage has
/// a connected consumer; on ``stop()`` stops the plugins first, then the
/// broker, which commits its log.
public final class Supervisor: Sendable {
    public let config: SupervisorConfig
    private let logger: Logger
    private let broker: Broker
    private let processes: [PluginProcess]
    private let stopRequested = Atomic<Bool>(false)
    private let ready = Atomic<Bool>(false)
    /// The supervisor's own admin keys for its STATS readiness probe, when security is on.
    private let probeKeys: CurveClientKeys?

    /// Opens the broker (binding its sockets) and prepares the plugins; starts nothing yet.
    public init(config: SupervisorConfig, logger: Logger) throws {
        var brokerConfig = config.broker
        brokerConfig.pipeline = config.pipeline.names
        self.config = config
        self.logger = logger
        // With keys configured, each supervised plugin gets a fresh key pair for
        // this run, admitted with the role plugin:NAME; the keys reach the plugin
        // in its environment only (never on a command line, never on disk).
        var pluginKeys: [String: CurveClientKeys] = [:]
        if var security = brokerConfig.security {
            let serverKey = try security.publicKey
            for stage in config.pipeline.stages {
                guard case .process = stage.launch else { continue }
                let pair = try CurveKeyPair.generate()
                security.clients.removeAll { $0.name == "plugin:\(stage.name)" }
                security.clients.append(.init(name: "plugin:\(stage.name)", publicKey: pair.publicKey, roles: [.plugin(stage.name)]))
                pluginKeys[stage.name] = try CurveClientKeys(secretKey: pair.secretKey, serverKey: serverKey)
            }
            let probe = try CurveKeyPair.generate()
            security.clients.append(.init(name: "eventbus-supervisor", publicKey: probe.publicKey, roles: [.admin]))
            probeKeys = try CurveClientKeys(secretKey: probe.secretKey, serverKey: serverKey)
            brokerConfig.security = security
        } else {
            probeKeys = nil
        }
        broker = try Broker(config: brokerConfig, logger: logger)
        var processes: [PluginProcess] = []
        for (index, stage) in config.pipeline.stages.enumerated() {
            guard case .process(let executable, let extra) = stage.launch else { continue }
            let arguments = [
                "--name", stage.name, "--input", config.pipeline.input(of: index), "--output", config.pipeline.output(of: index),
                "--command", broker.commandEndpoint,
                "--data-dir", config.broker.dataDirectory + "/plugins/" + stage.name,
            ] + extra
            let environment = Self.allocatorEnvironment.merging(pluginKeys[stage.name]?.environment ?? [:]) { _, keys in keys }
            processes.append(PluginProcess(name: stage.name, executable: executable, arguments: arguments,
                                           environment: environment, config: config, logger: logger))
        }
        self.processes = processes
    }

    /// Allocator settings for the plugin processes, unless the operator set them.
    ///
    /// glibc raises its mmap threshold each time a large block is freed, after
    /// which freed large blocks stay in the heap: a plugin whose state arrays
    /// grow by doubling (the reducer's per-channel message arrays) would keep
    /// every outgrown copy resident. A fixed threshold (128 KiB, glibc's own
    /// starting value) hands large blocks back to the system when freed.
    static var allocatorEnvironment: [String: String] {
        ProcessInfo.processInfo.environment["MALLOC_MMAP_THRESHOLD_"] == nil ? ["MALLOC_MMAP_THRESHOLD_": "131072"] : [:]
    }

    /// The command endpoint as bound.
    public var commandEndpoint: String { broker.commandEndpoint }
    /// The stream endpoint as bound.
    public var streamEndpoint: String { broker.streamEndpoint }
    /// Whether every stage has had a connected consumer.
    public var isReady: Bool { ready.load(ordering: .acquiring) }

    /// Runs everything until ``stop()``; returns after plugins and broker have stopped.
    public func run() throws {
        let brokerDone = DispatchSemaphore(value: 0)
        let broker = self.broker
        let failure = Mutex<(any Error)?>(nil)
        Thread {
            do { try broker.run() } catch { failure.withLock { $0 = error } }
            brokerDone.signal()
        }.start()
        for process in processes { process.start() }
        logger.info("pipeline starting", metadata: ["bus.pipeline": "\(config.pipeline.names.joined(separator: ","))"])
        watchReadiness()
        for process in processes { process.stop() }
        broker.stop()
        brokerDone.wait()
        logger.info("eventbus stopped")
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// Asks ``run()`` to stop everything cleanly; safe from any thread.
    public func stop() { stopRequested.store(true, ordering: .releasing) }

    /// The running process id of plugin `name` (tests kill it).
    public func processIdentifier(of name: String) -> Int32? {
        processes.first { $0.name == name }?.processIdentifier
    }

    /// Whether plugin `name` is reported as crash looping.
    public func isCrashLooping(_ name: String) -> Bool {
        processes.first { $0.name == name }?.isCrashLooping ?? false
    }

    /// Polls STATS until every stage's consumer is connected, logs the ready line, then waits for stop.
    private func watchReadiness() {
        let expected = Set(config.pipeline.names)
        let supervisedNames = Set(processes.map(\.name))
        var lastWaitingLog = ContinuousClock.now
        let context = try? Context()
        var socket: Socket?
        if let context, let peer = try? Socket(context: context, type: .dealer) {
            try? peer.setLinger(0)
            try? peer.setReceiveTimeout(500)
            try? probeKeys?.apply(to: peer)
            try? peer.connect(broker.commandEndpoint)
            socket = peer
        }
        defer { socket?.close() }
        while !stopRequested.load(ordering: .acquiring) {
            Thread.sleep(forTimeInterval: 0.1)
            guard !ready.load(ordering: .acquiring), let socket else { continue }
            guard (try? socket.send([WireProtocol.signature, Verb.stats.bytes, Array("ready".utf8)])) == true,
                  let reply = try? socket.receive(), reply.count == 4,
                  let stats = try? JSONParser.parse(reply[3]), case .array(let consumers)? = stats["consumers"] else { continue }
            var connected: Set<String> = []
            for consumer in consumers where consumer["connected"]?.boolValue == true {
                guard let name = consumer["name"]?.stringValue else { continue }
                // With keys, a supervised stage counts only when its own plugin holds the consumer.
                if probeKeys != nil, supervisedNames.contains(name), consumer["client"]?.stringValue != "plugin:\(name)" { continue }
                connected.insert(name)
            }
            let missing = expected.subtracting(connected)
            if missing.isEmpty {
                ready.store(true, ordering: .releasing)
                logger.info("eventbus ready", metadata: [
                    "bus.command": "\(broker.commandEndpoint)", "bus.stream": "\(broker.streamEndpoint)",
                    "bus.pipeline": "\(config.pipeline.names.joined(separator: ","))",
                ])
            } else if ContinuousClock.now - lastWaitingLog > .seconds(5) {
                lastWaitingLog = .now
                logger.info("waiting for plugins to consume", metadata: ["bus.waiting": "\(missing.sorted().joined(separator: ","))"])
            }
        }
    }
}
