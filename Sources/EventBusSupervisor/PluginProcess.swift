#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging

/// One plugin process kept running: started, restarted with backoff when it
/// exits or is killed, reported loudly when it crash-loops, stopped on request.
final class PluginProcess: @unchecked Sendable {
    let name: String
    let executable: String
    let arguments: [String]
    /// Variables added to the plugin's environment (its CURVE keys when security is on).
    let environment: [String: String]
    private let config: SupervisorConfig
    private let logger: Logger
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var stopping = false
    /// The plugin process, from its start until its exit was seen.
    private var child: ChildProcess?
    private(set) var restarts = 0
    private(set) var crashLooping = false
    private var thread: Thread?
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
        let thread = Thread { [self] in supervise() }
        thread.name = "supervise \(name)"
        self.thread = thread
        thread.start()
    }

    /// Whether the plugin is in a crash loop (for status reports).
    var isCrashLooping: Bool { condition.withLock { crashLooping } }
    /// How often it was restarted.
    var restartCount: Int { condition.withLock { restarts } }

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
            condition.lock()
            if stopping {
                condition.unlock()
                break
            }
            var child: ChildProcess?
            do {
                child = try ChildProcess.spawn(executable: executable, arguments: arguments, environment: environment)
                self.child = child
            } catch {
                logger.error("cannot start plugin", metadata: ["bus.plugin": "\(name)", "error.type": "\(error)"])
            }
            condition.unlock()
            var how = "could not start"
            if let child {
                logger.info("plugin started", metadata: ["bus.plugin": "\(name)", "bus.pid": "\(child.pid)"])
                // The exit is seen first and the pid given up under the lock, then the
                // child is reaped: ``stop()`` signals only a pid that is still this child's.
                child.waitUntilEnded()
                condition.withLock { self.child = nil }
                how = child.reap().description
            }
            let stop = condition.withLock { stopping }
            if stop { break }

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
                condition.withLock { crashLooping = true }
                backoff = config.crashLoopBackoff
            } else {
                condition.withLock { crashLooping = false }
                logger.warning("plugin stopped unexpectedly; restarting", metadata: [
                    "bus.plugin": "\(name)", "bus.exit": "\(how)", "bus.backoff": "\(backoff)",
                ])
            }
            condition.lock()
            restarts += 1
            let deadline = Date().addingTimeInterval(Double(backoff.components.seconds) + Double(backoff.components.attoseconds) / 1e18)
            while !stopping && Date() < deadline { _ = condition.wait(until: deadline) }
            condition.unlock()
            if quickExits < config.crashLoopLimit { backoff = min(backoff * 2, config.maximumBackoff) }
        }
        finished.signal()
    }

    /// Sends `signal` to the running plugin, if one runs.
    private func send(_ signal: Int32) -> Bool {
        condition.withLock {
            guard let child else { return false }
            kill(child.pid, signal)
            return true
        }
    }

    /// Sends SIGTERM, waits up to the stop timeout, then SIGKILL; returns when supervision ended.
    func stop() {
        condition.withLock {
            stopping = true
            condition.broadcast()
        }
        guard thread != nil else { return }
        if send(SIGTERM) {
            let timeout = Double(config.stopTimeout.components.seconds) + Double(config.stopTimeout.components.attoseconds) / 1e18
            if finished.wait(timeout: .now() + timeout) == .success { return }
            logger.warning("plugin did not stop in time; killing it", metadata: ["bus.plugin": "\(name)"])
            _ = send(SIGKILL)
        }
        finished.wait()
    }

    /// The running process's id, if one runs (tests kill it with SIGKILL).
    var processIdentifier: Int32? {
        condition.withLock { child?.pid }
    }
}
