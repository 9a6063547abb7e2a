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
    private var process: Process?
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

    private func supervise() {
        var backoff = config.initialBackoff
        var quickExits = 0
        while true {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            if !environment.isEmpty {
                process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, own in own }
            }
            process.standardInput = FileHandle.nullDevice
            let started = ContinuousClock.now
            condition.lock()
            if stopping {
                condition.unlock()
                break
            }
            do {
                try process.run()
                self.process = process
            } catch {
                logger.error("cannot start plugin", metadata: ["bus.plugin": "\(name)", "error.type": "\(error)"])
            }
            condition.unlock()
            var how = "could not start"
            if process.processIdentifier > 0 {
                logger.info("plugin started", metadata: ["bus.plugin": "\(name)", "bus.pid": "\(process.processIdentifier)"])
                how = Self.waitForExit(process)
            }
            condition.lock()
            self.process = nil
            let stop = stopping
            condition.unlock()
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

    /// Waits until `process` has ended and says how, from the kernel.
    ///
    /// Not `Process.waitUntilExit`: on Linux, Foundation learns of an exit when a
    /// socket it passes to the child closes, and a sibling started at the same
    /// moment can inherit that socket too (swift-corelibs-foundation #4795); the
    /// wait then lasts as long as the sibling, which the supervisor stops only
    /// after this one. `waitid` with `WNOWAIT` sees the exit and leaves the
    /// reaping to Foundation.
    private static func waitForExit(_ process: Process) -> String {
        var info = siginfo_t()
        while waitid(P_PID, id_t(process.processIdentifier), &info, WEXITED | WNOWAIT) != 0 {
            guard errno == EINTR else {
                // ECHILD: Foundation has reaped it, so it has seen the exit.
                process.waitUntilExit()
                return process.terminationReason == .uncaughtSignal ? "killed by signal \(process.terminationStatus)"
                    : "exited with status \(process.terminationStatus)"
            }
        }
        let status = info._sifields._sigchld.si_status
        return info.si_code == Int32(CLD_EXITED) ? "exited with status \(status)" : "killed by signal \(status)"
    }

    /// Sends SIGTERM, waits up to the stop timeout, then SIGKILL; returns when supervision ended.
    func stop() {
        condition.lock()
        stopping = true
        let running = process
        condition.broadcast()
        condition.unlock()
        guard thread != nil else { return }
        // Supervision ends when the process has (the kernel's word, not Foundation's; see waitForExit).
        if let pid = running?.processIdentifier, pid > 0 {
            kill(pid, SIGTERM)
            let timeout = Double(config.stopTimeout.components.seconds) + Double(config.stopTimeout.components.attoseconds) / 1e18
            if finished.wait(timeout: .now() + timeout) == .success { return }
            logger.warning("plugin did not stop in time; killing it", metadata: ["bus.plugin": "\(name)"])
            kill(pid, SIGKILL)
        }
        finished.wait()
    }

    /// The running process's id, if one runs (tests kill it with SIGKILL).
    var processIdentifier: Int32? {
        condition.withLock { process?.isRunning == true ? process?.processIdentifier : nil }
    }
}
