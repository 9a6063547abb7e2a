import EventBus
import Logging
import Synchronization
import ZeroMQ

/// Watches the broker until every stage of the pipeline has its consumer connected,
/// then logs the one ready line ("eventbus ready") and returns.
///
/// A blocking loop for ``BlockingService``: it polls the ``ReadinessProbe``'s socket and
/// an event descriptor that ``stop()`` signals, never a sleep. It ends when the bus is
/// ready; a supervisor stopped before that ends it through ``stop()``.
final class ReadinessWatch: Sendable {
    private let stages: [String]
    private let supervised: Set<String>
    private let endpoint: String
    private let streamEndpoint: String?
    private let keys: CurveClientKeys?
    private let logger: Logger
    private let ready = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)
    private let wake: EventFD

    /// - Parameters:
    ///   - stages: The pipeline's stage names, in order.
    ///   - supervised: The stages whose plugins the supervisor starts (with keys, only
    ///     their own plugin's consumer counts).
    ///   - keys: The supervisor's admin keys for STATS, when security is on.
    init(stages: [String], supervised: Set<String>, commandEndpoint: String, streamEndpoint: String?,
         keys: CurveClientKeys?, logger: Logger) throws {
        self.stages = stages
        self.supervised = supervised
        endpoint = commandEndpoint
        self.streamEndpoint = streamEndpoint
        self.keys = keys
        self.logger = logger
        wake = try EventFD()
    }

    /// Whether every stage has had a connected consumer.
    var isReady: Bool { ready.load(ordering: .acquiring) }

    /// Ends ``run()``; safe from any thread, more than once.
    func stop() {
        stopRequested.store(true, ordering: .releasing)
        wake.signal()
    }

    /// Probes STATS until every stage's consumer is connected, logs the ready line and
    /// returns; returns early on ``stop()``.
    func run() throws {
        let probe = try ReadinessProbe(context: Context(), endpoint: endpoint, keys: keys, logger: logger)
        defer { probe.close() }
        var poller = Poller()
        poller.add(fileDescriptor: wake.fileDescriptor)
        poller.add(probe.socket)
        var lastWaitingLog = ContinuousClock.now
        while !stopRequested.load(ordering: .acquiring) {
            let events = try poller.poll(timeoutMilliseconds: probe.pollTimeout(now: .now))
            if events[0].contains(.readable) { wake.drain() }
            guard let stats = probe.step(readable: events[1].contains(.readable), now: .now) else { continue }
            let missing = Set(stages).subtracting(Self.connectedConsumers(stats: stats, supervised: supervised, keyed: keys != nil))
            if missing.isEmpty {
                ready.store(true, ordering: .releasing)
                logger.info("eventbus ready", metadata: [
                    "bus.command": "\(endpoint)", "bus.stream": "\(streamEndpoint ?? "none")",
                    "bus.pipeline": "\(stages.joined(separator: ","))",
                ])
                return
            }
            if ContinuousClock.now - lastWaitingLog > .seconds(5) {
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
