#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// One plugin process kept running, as a service of the supervisor's `ServiceGroup`:
/// started, restarted by ``RestartSchedule`` when it exits or is killed, reported loudly
/// when it crash-loops; at graceful shutdown sent SIGTERM, then SIGKILL after
/// ``SupervisorConfig/stopTimeout``.
///
/// Each start forks from a thread of its own that lives until that process has ended:
/// the kernel's parent-death signal (`PR_SET_PDEATHSIG`, see ``ChildProcess``) fires
/// when the forking *thread* ends, so the plugin is killed with the supervisor and not
/// before. The thread only spawns and waits; the service's task decides everything else.
final class PluginProcess: Service, Sendable {
    let name: String
    let executable: String
    let arguments: [String]
    /// Variables added to the plugin's environment (its CURVE keys when security is on).
    let environment: [String: String]
    private let config: SupervisorConfig
    private let logger: Logger

    private struct Status {
        /// Set once by graceful shutdown or cancellation: nothing starts after it.
        var stopping = false
        /// The plugin process, from its start until its end was seen.
        var pid: pid_t?
        var restarts = 0
        var crashLooping = false
    }

    /// What other threads read (tests, status reports) and what the signals go to.
    private let status = Mutex(Status())
    /// The wait between two starts, which a stop ends at once.
    private let backoff = Backoff()

    /// What the forking thread reports.
    private enum ChildEvent: Sendable {
        case started(ChildProcess)
        case failed(any Error)
        case ended
    }

    init(name: String, executable: String, arguments: [String], environment: [String: String] = [:],
         config: SupervisorConfig, logger: Logger) {
        self.name = name
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.config = config
        self.logger = logger
    }

    /// Whether the plugin is in a crash loop (for status reports).
    var isCrashLooping: Bool { status.withLock { $0.crashLooping } }
    /// How often it was restarted.
    var restartCount: Int { status.withLock { $0.restarts } }
    /// The running process's id, if one runs (tests kill it with SIGKILL).
    var processIdentifier: Int32? { status.withLock { $0.pid } }

    /// Keeps the plugin running until graceful shutdown (or cancellation); returns once
    /// its last process has ended.
    func run() async {
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await supervise()
            } onGracefulShutdown: { [self] in
                beginStop()
            }
        } onCancel: { [self] in
            beginStop()
        }
    }

    private func supervise() async {
        var schedule = RestartSchedule(config)
        let environment = ProcessInfo.processInfo.environment.merging(self.environment) { _, own in own }
        while !isStopping {
            let started = ContinuousClock.now
            guard let how = await runOnce(environment: environment), !isStopping else { return }
            let decision = schedule.exited(after: .now - started)
            status.withLock {
                $0.crashLooping = decision.crashLooping
                $0.restarts += 1
            }
            if decision.enteredCrashLoop {
                logger.critical("PLUGIN CRASH LOOP: plugin keeps failing; events wait for it, nothing is skipped", metadata: [
                    "bus.plugin": "\(name)", "bus.exits_in_a_row": "\(decision.quickExits)", "bus.last_exit": "\(how)",
                    "bus.retry_every": "\(decision.wait)",
                ])
            } else if !decision.crashLooping {
                logger.warning("plugin stopped unexpectedly; restarting", metadata: [
                    "bus.plugin": "\(name)", "bus.exit": "\(how)", "bus.backoff": "\(decision.wait)",
                ])
            } else {
                // Every exit of the loop too (one a crashLoopBackoff): how it ended is what an operator needs.
                logger.warning("plugin still crash looping; restarting", metadata: [
                    "bus.plugin": "\(name)", "bus.exit": "\(how)", "bus.exits_in_a_row": "\(decision.quickExits)",
                    "bus.backoff": "\(decision.wait)",
                ])
            }
            await backoff.wait(for: decision.wait)
        }
    }

    private var isStopping: Bool { status.withLock { $0.stopping } }

    /// Stops supervising: no new start, the backoff ended, SIGTERM to a running plugin and
    /// SIGKILL after the stop timeout if that same process still runs. Synchronous and
    /// safe from any thread: it needs no task to run, so a busy shared pool cannot delay it.
    private func beginStop() {
        let pid: pid_t? = status.withLock { status in
            status.stopping = true
            if let pid = status.pid { kill(pid, SIGTERM) }
            return status.pid
        }
        backoff.interrupt()
        guard let pid else { return }
        let (name, logger) = (self.name, self.logger)
        DispatchQueue.global().asyncAfter(deadline: .now() + DispatchTimeInterval(config.stopTimeout)) { [self] in
            // Only while the pid is still this plugin's: it is given up, under the lock, when it ends.
            let killed = status.withLock { status in
                guard status.pid == pid else { return false }
                kill(pid, SIGKILL)
                return true
            }
            if killed { logger.warning("plugin did not stop in time; killed it", metadata: ["bus.plugin": "\(name)"]) }
        }
    }

    /// Starts the plugin once and waits for its end; says how it ended, or nil when it
    /// was not started because supervision is stopping.
    private func runOnce(environment: [String: String]) async -> String? {
        let (events, continuation) = AsyncStream.makeStream(of: ChildEvent.self)
        let thread = Thread { [self] in
            let child: ChildProcess?
            do {
                // Spawned under the lock: a stop either sees the pid or keeps this from starting.
                child = try status.withLock { status in
                    if status.stopping { return nil }
                    let child = try ChildProcess.spawn(executable: executable, arguments: arguments, environment: environment)
                    status.pid = child.pid
                    return child
                }
            } catch {
                continuation.yield(.failed(error))
                continuation.finish()
                return
            }
            guard let child else {
                continuation.finish()
                return
            }
            continuation.yield(.started(child))
            // The end is seen first and the pid given up under the lock; the owner reaps
            // later, so a signal only ever goes to a pid that is still this child's.
            child.waitUntilEnded()
            status.withLock { $0.pid = nil }
            continuation.yield(.ended)
            continuation.finish()
        }
        thread.name = "plugin \(name)"
        thread.start()

        var iterator = events.makeAsyncIterator()
        switch await iterator.next() {
        case .started(let child):
            logger.info("plugin started", metadata: ["bus.plugin": "\(name)", "bus.pid": "\(child.pid)"])
            _ = await iterator.next()  // .ended
            return child.reap().description
        case .failed(let error):
            logger.error("cannot start plugin", metadata: ["bus.plugin": "\(name)", "error.type": "\(error)"])
            return "could not start"
        case .ended, nil:
            return nil
        }
    }

    /// Sends `signal` to the running plugin, if one runs.
    private func send(_ signal: Int32) {
        status.withLock { status in
            if let pid = status.pid { kill(pid, signal) }
        }
    }
}
