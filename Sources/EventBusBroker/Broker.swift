import Logging
import Synchronization

/// The event-bus broker: a ROUTER command socket, an XPUB stream socket and the
/// durable log, served by one thread.
///
/// ```swift
/// var config = BrokerConfig()
/// config.dataDirectory = "/var/lib/eventbus"
/// let broker = try Broker(config: config, logger: logger)
/// Thread { try? broker.run() }.start()
/// // …
/// broker.stop()
/// ```
public final class Broker: Sendable {
    // The loop, its sockets and its core are created here and then used only by
    // the thread inside `run`; `running` makes sure there is one such thread.
    nonisolated(unsafe) private let loop: BrokerLoop
    /// Internal, not private, for tests' hooks (the log's `failNextSync` is atomic).
    var core: BrokerCore { loop.core }
    private let stopRequested = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)

    /// The command endpoint as bound (`tcp://127.0.0.1:*` shows the chosen port).
    public let commandEndpoint: String
    /// The stream endpoint as bound.
    public let streamEndpoint: String

    /// Opens the log under the data directory and binds both sockets.
    ///
    /// The data directory is created with mode 0700 if missing; one that group
    /// or others may read, write or enter is refused unless
    /// ``BrokerConfig/allowSharedDataDirectory`` is set.
    ///
    /// - Throws: When the data directory cannot be used (or is open to others),
    ///   the log cannot be opened, or an endpoint cannot be bound.
    public init(config: BrokerConfig, logger: Logger) throws {
        try DataDirectoryPolicy.prepare(config)
        loop = try BrokerLoop(config: config, logger: logger)
        commandEndpoint = loop.commandEndpoint
        streamEndpoint = loop.streamEndpoint
    }

    /// Serves on the calling thread until `stop()`; commits and closes the log before returning.
    public func run() throws {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            throw BrokerError.alreadyRunning
        }
        core.logger.info("broker serving", metadata: [
            "bus.command": "\(commandEndpoint)", "bus.stream": "\(streamEndpoint)",
            "bus.data_dir": "\(core.config.dataDirectory)", "bus.fsync": "\(core.config.fsync.rawValue)",
        ])
        loop.run { stopRequested.load(ordering: .acquiring) }
        if let fatal = core.fatal { throw fatal }
    }

    /// Asks `run()` to return; safe from any thread.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
    }
}

/// Errors of the broker's own lifecycle: a ``Code`` to act on, a sentence to read.
public struct BrokerError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure it is; `eventbus` chooses its exit status by it.
    public enum Code: String, Sendable, Equatable {
        /// `run()` was called while the broker was already running.
        case alreadyRunning = "already_running"
        /// A setting the broker refuses to run with: a bind without keys beyond loopback,
        /// a data directory open to group or others. Restarting does not help; the setting must change.
        case refusedSetting = "refused_setting"
        /// The data directory (or an ipc socket file) cannot be created, read or restricted.
        case dataDirectory = "data_directory"
        /// An fsync of the log failed: the broker stopped without confirming more.
        case fsyncFailed = "fsync_failed"
        /// Another process listens on an endpoint's ipc socket file. Retry once it has stopped,
        /// or choose another path.
        case endpointInUse = "endpoint_in_use"
    }

    public let code: Code
    public let description: String
    /// Creates an error with its code and a sentence saying what went wrong.
    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
    /// `run()` was called while the broker was already running.
    public static let alreadyRunning = BrokerError(.alreadyRunning, "the broker is already running")
}
