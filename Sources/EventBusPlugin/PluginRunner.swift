import EventBus
import Logging
import Synchronization
import ZeroMQ

/// Runs a ``Plugin`` against the broker: the whole consume–handle–publish–commit–ack cycle.
///
/// One pass of the loop takes up to `batchSize` events of the input stage,
/// hands each to the plugin in SEQ order, publishes what it passed on or
/// emitted (PUB with confirm; the broker deduplicates repeats by id), then
/// ACKs the last SEQ and, every so often, commits the state with that SEQ.
/// After a crash the plugin restarts from its committed state and SEQ, handles
/// the events after it again, and republishes the same ids: effectively once.
///
/// ``run()`` serves on the thread that calls it: the socket, the plugin's state and the
/// protocol bookkeeping (``RunnerState``) live in a ``RunnerLoop`` that never leaves that
/// thread. The runner itself holds only what any thread may touch: ``stop()`` and
/// ``lastAppliedSeq``.
public final class PluginRunner<P: Plugin>: Sendable {
    public let plugin: P
    public let configuration: PluginConfiguration
    let store: (any PluginStore)?
    let logger: Logger
    let context: Context
    let metrics: PluginMetrics
    private let stopRequested = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)
    private let appliedSeq = Atomic<UInt64>(0)

    /// Prepares a runner; nothing connects until ``run()``.
    ///
    /// - Parameter store: Where the state is committed; by default a
    ///   ``FileSnapshotStore`` in the configuration's data directory when the
    ///   plugin's state is persistent.
    public init(plugin: P, configuration: PluginConfiguration, store: (any PluginStore)? = nil, logger: Logger) throws {
        self.plugin = plugin
        self.configuration = configuration
        self.logger = logger
        if let store {
            self.store = store
        } else if P.State.isPersistent {
            self.store = try FileSnapshotStore(directory: configuration.dataDirectory)
        } else {
            self.store = nil
        }
        context = try Context()
        metrics = PluginMetrics(plugin: configuration.name, outputStage: configuration.outputStage)
    }

    /// Asks ``run()`` to finish the batch in hand, commit, and return. Safe from any thread.
    public func stop() { stopRequested.store(true, ordering: .releasing) }

    var stopped: Bool { stopRequested.load(ordering: .acquiring) }

    /// The SEQ of the last input event applied (for tests and logs): updated batch by batch.
    public var lastAppliedSeq: UInt64 { appliedSeq.load(ordering: .acquiring) }

    func applied(_ seq: UInt64) { appliedSeq.store(seq, ordering: .releasing) }

    /// Serves until ``stop()``; throws when the plugin throws or the broker refuses its output.
    ///
    /// Batches await their confirms while the next is handled, as many as the
    /// consumer's credit holds (``PublishWindow/hasRoom(batchSize:credit:)``), so
    /// that a slower commit gathers more output instead of stalling the plugin;
    /// a batch is ACKed once all of its output is confirmed,
    /// in order, and the state is committed only when nothing is in flight, so
    /// that a committed SEQ never runs ahead of confirmed output.
    ///
    /// - Throws: A ``PluginError`` (also when the runner is already running on
    ///   another thread), the plugin's or the store's error, or a `ZMQError`.
    public func run() throws {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            throw PluginError("plugin runner \(configuration.name) is already running")
        }
        defer { running.store(false, ordering: .releasing) }
        try RunnerLoop(runner: self).run()
    }
}
