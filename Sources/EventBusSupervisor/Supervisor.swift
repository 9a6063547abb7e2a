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
    /// Wakes ``watchReadiness()`` on ``stop()``.
    private let wake: EventFD
    /// The supervisor's own admin keys for its STATS readiness probe, when security is on.
    private let probeKeys: CurveClientKeys?

    /// Opens the broker (binding its sockets) and prepares the plugins; starts nothing yet.
    public init(config: SupervisorConfig, logger: Logger) throws {
        var brokerConfig = config.broker
        brokerConfig.pipeline = config.pipeline.names
        self.config = config
        self.logger = logger
        wake = try EventFD()
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
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        wake.signal()
    }

    /// The running process id of plugin `name` (tests kill it).
    public func processIdentifier(of name: String) -> Int32? {
        processes.first { $0.name == name }?.processIdentifier
    }

    /// Whether plugin `name` is reported as crash looping.
    public func isCrashLooping(_ name: String) -> Bool {
        processes.first { $0.name == name }?.isCrashLooping ?? false
    }

    /// Probes STATS until every stage's consumer is connected, logs the ready line, then waits for stop.
    ///
    /// Waiting is a poll of the probe's socket and of ``wake`` (which ``stop()`` signals), never a sleep.
    private func watchReadiness() {
        let expected = Set(config.pipeline.names)
        let supervisedNames = Set(processes.map(\.name))
        var lastWaitingLog = ContinuousClock.now
        var probe: ReadinessProbe?
        do {
            probe = try ReadinessProbe(context: Context(), endpoint: broker.commandEndpoint, keys: probeKeys, logger: logger)
        } catch {
            logger.error("readiness probe unavailable; no ready line", metadata: ["error.type": "\(error)"])
        }
        defer { probe?.close() }
        var poller = Poller()
        poller.add(fileDescriptor: wake.fileDescriptor)
        if let probe { poller.add(probe.socket) }
        while !stopRequested.load(ordering: .acquiring) {
            let probing = ready.load(ordering: .acquiring) ? nil : probe
            let events: [Poller.Events]
            do {
                events = try poller.poll(timeoutMilliseconds: probing?.pollTimeout(now: .now) ?? -1)
            } catch {
                logger.error("readiness probe stopped: poll failed", metadata: ["error.type": "\(error)"])
                probe?.close()
                probe = nil
                poller = Poller()
                poller.add(fileDescriptor: wake.fileDescriptor)
                continue
            }
            if events[0].contains(.readable) { wake.drain() }
            guard let probing, let stats = probing.step(readable: events.count > 1 && events[1].contains(.readable), now: .now)
            else { continue }
            let missing = expected.subtracting(Self.connectedConsumers(stats: stats, supervised: supervisedNames, keyed: probeKeys != nil))
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

    /// The consumers a STATS reply shows connected. With keys (`keyed`), a `supervised`
    /// stage counts only when its own plugin holds the consumer (client `plugin:NAME`).
    static func connectedConsumers(stats: [UInt8], supervised: Set<String>, keyed: Bool) -> Set<String> {
        guard let value = try? JSONParser.parse(stats), case .array(let consumers)? = value["consumers"] else { return [] }
        var connected: Set<String> = []
        for consumer in consumers where consumer["connected"]?.boolValue == true {
            guard let name = consumer["name"]?.stringValue else { continue }
            if keyed, supervised.contains(name), consumer["client"]?.stringValue != "plugin:\(name)" { continue }
            connected.insert(name)
        }
        return connected
    }
}
