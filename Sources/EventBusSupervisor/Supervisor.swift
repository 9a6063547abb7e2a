import EventBus
import EventBusBroker
import EventBusService
import Foundation
import Logging
import ServiceLifecycle
import ZeroMQ

/// `eventbus up`: the broker plus the pipeline's plugin processes, supervised.
///
/// A `ServiceGroup` of its parts, in this order: the broker (its loop on a thread of
/// its own; or another ``BusFront``, the JetStream gateway of `--backend`), each plugin
/// as a ``PluginProcess`` (started with `--name --input --output --command --data-dir`,
/// restarted with backoff when it exits or is killed, loud about crash loops), and the
/// ``ReadinessWatch`` that logs one ready line once every stage has a connected consumer, and
/// the HTTP ingress of ``SupervisorConfig/http`` (`eventbus-http`, supervised as a plugin is). Graceful shutdown runs in reverse: the watch, then the
/// plugins and the HTTP ingress, all at once (``PluginProcesses``), then the broker, which commits its log. The broker ending or failing shuts
/// the group down; its error is ``run()``'s.
///
/// It is a `Service` itself: `eventbus up` runs it in a group with the SIGTERM and SIGINT
/// handlers; a program that embeds the bus adds it to its own group. Its tasks run on a
/// ``ThreadExecutor`` of its own, so a plugin is restarted (or stopped) on time even when
/// the host program keeps every thread of the shared pool busy.
public final class Supervisor: Service, Sendable {
    public let config: SupervisorConfig
    private let logger: Logger
    private let front: any BusFront
    private let processes: [PluginProcess]
    private let readiness: ReadinessWatch
    private let group: ServiceGroup

    /// Opens the embedded broker (binding its sockets) and prepares the plugins; starts nothing yet.
    public convenience init(config: SupervisorConfig, logger: Logger) throws {
        var brokerConfig = config.broker
        brokerConfig.pipeline = config.pipeline.names
        // With keys configured, each supervised plugin gets a fresh key pair for this run.
        let keys = try brokerConfig.security.map { try RunKeys(config: config, security: $0) }
        brokerConfig.security = keys?.security
        let broker = try Broker(config: brokerConfig, logger: logger)
        try self.init(config: config, front: EmbeddedBroker(broker), pluginKeys: keys?.pluginKeys ?? [:], probeKeys: keys?.probeKeys,
                      logger: logger)
    }

    /// Prepares the plugins against `front`, which is already bound (the JetStream
    /// gateway of `eventbus up --backend`); starts nothing yet. Plugins keep their
    /// state under `config.broker.dataDirectory`/plugins. With keys
    /// (`config.broker.security`), `keys` must be this run's, and `front` must admit
    /// ``RunKeys/security``.
    ///
    /// - Parameters:
    ///   - pluginEnvironment: Variables added to every plugin's environment, such as
    ///     `EVENTBUS_STATE` (the cluster that keeps the plugins' state and leases).
    ///   - pluginEnvironments: Variables added to one plugin's, by plugin name, over those:
    ///     its own `EVENTBUS_STATE`, with its own user (`eventbus up --backend-users`).
    public convenience init(config: SupervisorConfig, front: any BusFront, keys: RunKeys? = nil,
                            pluginEnvironment: [String: String] = [:],
                            pluginEnvironments: [String: [String: String]] = [:], logger: Logger) throws {
        guard (config.broker.security == nil) == (keys == nil) else {
            throw PipelineError(.securityFile, "keys (--security) need this run's keys for the plugins, and the keys need --security")
        }
        try self.init(config: config, front: front, pluginKeys: keys?.pluginKeys ?? [:], probeKeys: keys?.probeKeys,
                      pluginEnvironment: pluginEnvironment, pluginEnvironments: pluginEnvironments, logger: logger)
    }

    private init(config: SupervisorConfig, front: any BusFront, pluginKeys: [String: CurveClientKeys],
                 probeKeys: CurveClientKeys?, pluginEnvironment: [String: String] = [:],
                 pluginEnvironments: [String: [String: String]] = [:], logger: Logger) throws {
        self.config = config
        self.logger = logger
        self.front = front
        var processes: [PluginProcess] = []
        for (index, stage) in config.pipeline.stages.enumerated() {
            guard case .process(let executable, let extra) = stage.launch else { continue }
            let arguments = [
                "--name", stage.name, "--input", config.pipeline.input(of: index), "--output", config.pipeline.output(of: index),
                "--command", front.commandEndpoint,
                "--data-dir", config.broker.dataDirectory + "/plugins/" + stage.name,
            ] + extra
            let environment = Self.allocatorEnvironment.merging(pluginEnvironment) { _, given in given }
                .merging(pluginEnvironments[stage.name] ?? [:]) { _, own in own }
                .merging(pluginKeys[stage.name]?.environment ?? [:]) { _, keys in keys }
            processes.append(PluginProcess(name: stage.name, executable: executable, arguments: arguments,
                                           environment: environment, config: config, logger: logger))
        }
        if let http = config.http {
            let arguments = http.arguments(commandEndpoint: front.commandEndpoint,
                                           securityFile: config.broker.security == nil ? nil : config.broker.securityFile)
            let environment = pluginKeys[HTTPIngressLaunch.name]?.environment ?? [:]
            processes.append(PluginProcess(name: HTTPIngressLaunch.name, executable: http.executable, arguments: arguments,
                                           environment: environment, config: config, logger: logger))
        }
        self.processes = processes
        readiness = try ReadinessWatch(stages: config.pipeline.names, supervised: Set(processes.map(\.name)).subtracting([HTTPIngressLaunch.name]),
                                       commandEndpoint: front.commandEndpoint, streamEndpoint: front.streamEndpoint,
                                       keys: probeKeys, logger: logger)
        let readiness = self.readiness
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: BlockingService(name: front.threadName, run: { try front.run() }, stop: { front.stop() }),
                  successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup),
        ]
        if !processes.isEmpty {
            services.append(.init(service: PluginProcesses(processes: processes),
                                  successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup))
        }
        // The watch ends once the bus is ready; the others go on.
        services.append(.init(service: BlockingService(name: "eventbus.readiness", run: {
            do { try readiness.run() } catch { logger.error("readiness probe failed; no ready line", metadata: ["error.type": "\(error)"]) }
        }, stop: { readiness.stop() }), successTerminationBehavior: .ignore))
        group = ServiceGroup(configuration: .init(services: services, logger: logger))
    }

    /// Allocator settings for the plugin processes, each unless the operator set it.
    ///
    /// glibc raises its mmap threshold each time a large block is freed, after
    /// which freed large blocks stay in the heap: a plugin whose state arrays
    /// grow by doubling (the reducer's per-channel message arrays) would keep
    /// every outgrown copy resident. A fixed mmap threshold of 1 MiB hands blocks
    /// that large back to the system when freed; smaller outgrown copies stay in
    /// the heap for reuse.
    ///
    /// The trim threshold of 4 MiB keeps that much free memory at the heap's top
    /// instead of 128 KiB. A plugin's deliveries come in frames of up to a few
    /// hundred KiB (5,000 events of credit); with glibc's defaults each such frame
    /// was mapped and unmapped, or the heap's top trimmed and grown again, and
    /// every page faulted anew: 55,000 page faults in the reducer for 200,000 acks,
    /// 3,100 with these settings (docs/operations.md, "Memory").
    package static var allocatorEnvironment: [String: String] {
        let given = ProcessInfo.processInfo.environment
        return ["MALLOC_MMAP_THRESHOLD_": "1048576", "MALLOC_TRIM_THRESHOLD_": "4194304"].filter { given[$0.key] == nil }
    }

    /// The command endpoint as bound.
    public var commandEndpoint: String { front.commandEndpoint }
    /// The stream endpoint as bound, if the front has one (the embedded broker has).
    public var streamEndpoint: String? { front.streamEndpoint }
    /// Whether every stage has had a connected consumer.
    public var isReady: Bool { readiness.isReady }

    /// Runs the broker and the plugins until graceful shutdown (``stop()``, or the
    /// enclosing group's); returns after the plugins and then the broker have stopped.
    /// Runs once.
    public func run() async throws {
        logger.info("pipeline starting", metadata: ["bus.pipeline": "\(config.pipeline.names.joined(separator: ","))"])
        // The group's tasks run on a thread of the supervisor's own, never waiting for the shared pool.
        let executor = ThreadExecutor(name: "eventbus.supervisor")
        defer { executor.shutdown() }
        try await withTaskExecutorPreference(executor) { [group] in try await group.run() }
        logger.info("eventbus stopped")
    }

    /// Asks ``run()`` to stop everything cleanly; before ``run()``, it stops at once.
    public func stop() async {
        await group.triggerGracefulShutdown()
    }

    /// The running process id of plugin `name` (tests kill it).
    public func processIdentifier(of name: String) -> Int32? {
        processes.first { $0.name == name }?.processIdentifier
    }

    /// Whether plugin `name` is reported as crash looping.
    public func isCrashLooping(_ name: String) -> Bool {
        processes.first { $0.name == name }?.isCrashLooping ?? false
    }
}
