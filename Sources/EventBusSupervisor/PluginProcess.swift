#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import Synchronization

/// One plugin process kept running: started, restarted with backoff when it
/// exits or is killed, reported loudly when it crash-loops, stopped on request.
///
/// Its supervision loop runs on a thread of its own (``start()``); what other threads
/// read or change (the pid, the stop request, the counters) is behind one `Mutex`, and
/// the backoff between two starts is a wait on a semaphore that ``stop()`` signals.
final class PluginProcess: Sendable {
    let name: String
    let executable: String
    let arguments: [String]
    /// Variables added to the plugin's environment (its CURVE keys when security is on).
    let environment: [String: String]
    private let config: SupervisorConfig
    private let logger: Logger

    private struct Status {
        var started = false
        var stopping = false
        /// The plugin process, from its start until its exit was seen.
        var pid: pid_t?
        var restarts = 0
        var crashLooping = false
    }

    private let status = Mutex(Status())
    /// Signalled by ``stop()``: ends the backoff wait at once.
    private let stopSignal = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(name: String, executable: String, arguments: [String], environment: [String: String] = [:],
         config: SupervisorConfig, logger: Logger) {
        self.name = name
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.config = config
        self.logger = logger
    }

    /// Starts supervising on a thread of its own.
    func start() {
        status.withLock { $0.started = true }
        let thread = Thread { [self] in supervise() }
        thread.name = "supervise \(name)"
        thread.start()
    }

    /// Whether the plugin is in a crash loop (for status reports).
    var isCrashLooping: Bool { status.withLock { $0.crashLooping } }
    /// How often it was restarted.
    var restartCount: Int { status.withLock { $0.restarts } }

    /// The supervision loop, on the thread ``start()`` made, which lives until the
    /// plugin is stopped: each plugin process is forked from this thread because
    /// the kernel's parent-death signal (`PR_SET_PDEATHSIG`, see ``ChildProcess``)
    /// fires when the forking *thread* ends. The plugin is killed with the
    /// supervisor, and not before.
    private func supervise() {
        var backoff = config.initialBackoff
        var quickExits = 0
        let environment = ProcessInfo.processInfo.environment.merging(self.environment) { _, own in own }
        while true {
            let started = ContinuousClock.now
            // Spawned under the lock: ``stop()`` either sees the pid or keeps this from starting.
            let spawned: Result<ChildProcess, any Error>? = status.withLock { status in
                if status.stopping { return nil }
                do {
                    let child = try ChildProcess.spawn(executable: executable, arguments: arguments, environment: environment)
                    status.pid = child.pid
                    return .success(child)
                } catch {
                    return .failure(error)
                }
            }
            guard let spawned else { break }
            var how = "could not start"
            switch spawned {
            case .success(let child):
                logger.info("plugin started", metadata: ["bus.plugin": "\(name)", "bus.pid": "\(child.pid)"])
                // The exit is seen first and the pid given up under the lock, then the
                // child is reaped: ``stop()`` signals only a pid that is still this child's.
                child.waitUntilEnded()
                status.withLock { $0.pid = nil }
                how = child.reap().description
            case .failure(let error):
                logger.error("cannot start plugin", metadata: ["bus.plugin": "\(name)", "error.type": "\(error)"])
            }
            if status.withLock({ $0.stopping }) { break }

            let ran = ContinuousClock.now - started
            if ran >= config.stableAfter {
                quickExits = 0
                backoff = config.initialBackoff
            } else {
                quickExits += 1
            }
            if quickExits >= config.crashLoopLimit {
                if !isCrashLooping {
                    logger.critical("PLUGIN CRASH LOOP: plugin keeps failing; events wait for it, nothing is skipped", metadata: [
                        "bus.plugin": "\(name)", "bus.exits_in_a_row": "\(quickExits)", "bus.last_exit": "\(how)",
                        "bus.retry_every": "\(config.crashLoopBackoff)",
                    ])
                }
                status.withLock { $0.crashLooping = true }
                backoff = config.crashLoopBackoff
            } else {
                status.withLock { $0.crashLooping = false }
                logger.warning("plugin stopped unexpectedly; restarting", metadata: [
                    "bus.plugin": "\(name)", "bus.exit": "\(how)", "bus.backoff": "\(backoff)",
                ])
            }
            status.withLock { $0.restarts += 1 }
            // The backoff: a wait that ``stop()`` ends early.
            _ = stopSignal.wait(timeout: .now() + Self.dispatchInterval(backoff))
            if quickExits < config.crashLoopLimit { backoff = min(backoff * 2, config.maximumBackoff) }
        }
        finished.signal()
    }

    private static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(Int(clamping: max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000))
    }

    /// Sends `signal` to the running plugin, if one runs.
    private func send(_ signal: Int32) -> Bool {
        status.withLock { status in
            guard let pid = status.pid else { return false }
            kill(pid, signal)
            return true
        }
    }

    /// Sends SIGTERM, waits up to the stop timeout, then SIGKILL; returns when supervision ended.
    func stop() {
        let started = status.withLock { status in
            status.stopping = true
            return status.started
        }
        stopSignal.signal()
        guard started else { return }
        if send(SIGTERM) {
            if finished.wait(timeout: .now() + Self.dispatchInterval(config.stopTimeout)) == .success { return }
            logger.warning("plugin did not stop in time; killing it", metadata: ["bus.plugin": "\(name)"])
            _ = send(SIGKILL)
        }
        finished.wait()
    }

    /// The running process's id, if one runs (tests kill it with SIGKILL).
    var processIdentifier: Int32? {
        status.withLock { $0.pid }
    }
}
