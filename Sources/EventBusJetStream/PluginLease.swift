import Dispatch
import Foundation
import Logging
import NATS
import Synchronization

/// One live instance per plugin on a JetStream cluster: a lease in the KV bucket
/// `EVENTBUS_LEASES`, whose entries expire ``ttl`` after their last write
/// (docs/scale-out.md, "Plugin state and the lease").
///
/// ``acquire(until:)`` creates the key `NAME` (only possible when it has no value: never
/// written, deleted, or expired because its holder stopped renewing) and waits while
/// another holds it. A key that names this very holder is taken over at once: the holder
/// is the machine and the plugin's data directory, which one process at a time can lock
/// (`DataDirectoryLock`), so a plugin restarted in place (after a SIGKILL) does not wait
/// for its predecessor's lease to expire; one on another machine waits a TTL. ``keep()`` renews it every third of the TTL with a compare-and-set on
/// the revision it wrote last; when a renewal fails because the revision moved (another
/// holds it) or when none succeeded for two thirds of the TTL (a cut from the cluster),
/// the lease is lost and ``keep()`` throws: the plugin must stop before another may take
/// over, which happens only once the key expired, a full TTL after the last renewal.
public final class PluginLease: Sendable {
    /// The bucket of every plugin's lease.
    public static let bucket = "EVENTBUS_LEASES"

    public let plugin: String
    /// Who holds it, shown to the instances that wait: the machine and the data directory.
    public let holder: String
    public let ttl: Duration
    private let connection: Connection
    private let jetStream: JetStream
    /// Bound on ``jetStream``, whose calls wait its whole request timeout: for renewals.
    private let kv: KeyValue
    private let logger: Logger
    private let revision = Mutex<UInt64?>(nil)
    private let stopped = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - holder: This instance's identity, the same for a restart in place (the machine
    ///     and the data directory, which only one live process can have locked).
    ///   - ttl: How long a lease outlives its last renewal: the longest a successor on
    ///     another machine waits after a holder died.
    public init(servers: [String], plugin: String, holder: String, ttl: Duration = .seconds(4), replicas: Int? = nil,
                trustedCertificates: String? = nil, logger: Logger) throws(NATSError) {
        self.plugin = plugin
        self.ttl = ttl
        self.logger = logger
        self.holder = holder
        connection = try Connection(ConnectOptions(servers: servers, name: "eventbus-lease-\(plugin)", timeout: .seconds(2),
                                                   allowReconnect: true, maxReconnect: -1, reconnectWait: .milliseconds(250),
                                                   trustedCertificates: trustedCertificates))
        let jetStream = try JetStream(connection: connection)
        self.jetStream = jetStream
        let config = KeyValueConfig(bucket: Self.bucket, history: 1, ttl: ttl, replicas: replicas ?? (servers.count >= 3 ? 3 : 1))
        kv = try ClusterWarmUp.bucket(config, on: jetStream, logger: logger)
    }

    /// Takes the lease, waiting while another instance holds it; false when `stopped`
    /// turned true first.
    public func acquire(until stopped: () -> Bool) throws(NATSError) -> Bool {
        var lastHolder: String?
        while !stopped() && !self.stopped.load(ordering: .acquiring) {
            do {
                // A try lost in an election is made again soon after it; a create that went
                // through unanswered makes the next one find this holder's value, and take it.
                let written = try ClusterWarmUp.retry("create \(Self.bucket)/\(plugin)", bucket: Self.bucket, on: jetStream,
                                                      wait: ClusterWarmUp.wait, logger: logger) { kv throws(NATSError) in
                    try kv.create(plugin, Array(holder.utf8))
                }
                revision.withLock { $0 = written }
                logger.info("lease taken", metadata: ["bus.plugin": "\(plugin)", "bus.lease_holder": "\(holder)"])
                return true
            } catch where error.isWrongLastSequence {
                let entry = (try? ClusterWarmUp.retry("get \(Self.bucket)/\(plugin)", bucket: Self.bucket, on: jetStream, wait: ttl) {
                    kv throws(NATSError) in try kv.get(plugin)
                }).flatMap { $0 }
                let current = entry.map { String(decoding: $0.value, as: UTF8.self) }
                if let entry, current == holder,
                   let written = try? ClusterWarmUp.retry("update \(Self.bucket)/\(plugin)", bucket: Self.bucket, on: jetStream, wait: ttl, {
                       kv throws(NATSError) in try kv.update(plugin, Array(holder.utf8), expectedRevision: entry.revision)
                   }) {
                    // Ours from before a restart in place: the process that held it is gone.
                    revision.withLock { $0 = written }
                    logger.info("lease taken over from this instance's previous run", metadata: ["bus.plugin": "\(plugin)"])
                    return true
                }
                if current != lastHolder {
                    lastHolder = current
                    logger.info("waiting for the lease another instance holds", metadata: [
                        "bus.plugin": "\(plugin)", "bus.lease_holder": "\(current ?? "?")", "bus.lease_ttl": "\(ttl)",
                    ])
                }
            }
            _ = wake.wait(timeout: .now() + .milliseconds(Int(ttl.milliseconds / 4)))
        }
        return false
    }

    /// Renews the lease until ``stop()``; throws ``PluginLeaseError`` when it is lost.
    /// Blocks: run it on a thread of its own beside the plugin.
    public func keep() throws(PluginLeaseError) {
        var lastRenewal = ContinuousClock.now
        while !stopped.load(ordering: .acquiring) {
            _ = wake.wait(timeout: .now() + .milliseconds(Int(ttl.milliseconds / 3)))
            if stopped.load(ordering: .acquiring) { return }
            do {
                guard try renew() else { throw PluginLeaseError(plugin: plugin, reason: "another instance holds it now") }
                lastRenewal = .now
            } catch {
                logger.warning("lease renewal failed; retrying", metadata: ["bus.plugin": "\(plugin)", "error.type": "\(error)"])
                if ContinuousClock.now - lastRenewal > ttl * 2 / 3 {
                    throw PluginLeaseError(plugin: plugin, reason: "not renewed for \(ContinuousClock.now - lastRenewal) (TTL \(ttl))")
                }
            }
        }
    }

    /// Renews the lease once, at the revision this instance wrote last: false when that
    /// revision moved (another instance holds the lease now) or it was never taken.
    public func renew() throws(NATSError) -> Bool {
        guard let expected = revision.withLock({ $0 }) else { return false }
        do {
            let written = try kv.update(plugin, Array(holder.utf8), expectedRevision: expected)
            revision.withLock { $0 = written }
            return true
        } catch {
            guard error.isWrongLastSequence else { throw error }
            revision.withLock { $0 = nil }
            return false
        }
    }

    /// Ends ``acquire(until:)`` and ``keep()``; safe from any thread.
    public func stop() {
        stopped.store(true, ordering: .releasing)
        wake.signal()
        wake.signal()
    }

    /// Gives the lease up, if this instance still holds it, so that a successor need not
    /// wait for the TTL.
    public func release() {
        guard let expected = revision.withLock({ $0 }) else { return }
        // A write at our revision first: only if it is still ours is the key then deleted.
        if (try? kv.update(plugin, Array("released".utf8), expectedRevision: expected)) != nil {
            try? kv.delete(plugin)
        }
        revision.withLock { $0 = nil }
    }
}

/// The lease of a plugin is lost: the plugin must stop (another may take over).
public struct PluginLeaseError: Error, Sendable, CustomStringConvertible {
    public let plugin: String
    public let reason: String
    public var description: String { "the lease of plugin \(plugin) is lost: \(reason)" }
}
