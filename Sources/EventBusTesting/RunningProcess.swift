import Foundation
import Logging

/// A child process started by a test, whose exit is awaited with a deadline: its
/// termination handler completes a ``Completion``, so no thread blocks on
/// `Process.waitUntilExit()`. Dropped while running, it is SIGKILLed.
public final class RunningProcess: Sendable {
    /// Where a child's output goes.
    public enum Output: Sendable {
        /// /dev/null.
        case discard
        /// This process's own stream.
        case inherit
        /// Appended to the file at this path, created if missing.
        case file(String)
    }

    private let process: Process
    private let exit = Completion<Int32>()
    /// The executable's file name, for messages.
    public let name: String
    public let processIdentifier: pid_t

    private static let logger = Logger(label: "eventbus.testing.process")

    /// Starts `executable` with `arguments`, in this process's environment plus `environment`.
    public init(_ executable: String, _ arguments: [String] = [], environment: [String: String] = [:],
                standardOutput: Output = .discard, standardError: Output = .discard) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, given in given }
        }
        if let handle = try Self.handle(standardOutput) { process.standardOutput = handle }
        if let handle = try Self.handle(standardError) { process.standardError = handle }
        let exit = self.exit
        process.terminationHandler = { exit.complete($0.terminationStatus) }
        try process.run()
        self.process = process
        name = URL(fileURLWithPath: executable).lastPathComponent
        processIdentifier = process.processIdentifier
        Self.logger.debug("started", metadata: ["process": "\(name)", "pid": "\(processIdentifier)"])
    }

    private static func handle(_ output: Output) throws -> FileHandle? {
        switch output {
        case .discard:
            return FileHandle.nullDevice
        case .inherit:
            return nil
        case .file(let path):
            if !FileManager.default.fileExists(atPath: path) {
                guard FileManager.default.createFile(atPath: path, contents: nil) else { throw ProcessError("cannot create \(path)") }
            }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.seekToEnd()
            return handle
        }
    }

    /// Whether the process has not exited yet (as far as its termination handler knows).
    public var isRunning: Bool { exit.value == nil }

    /// The exit status (the signal's number for a process a signal ended), once it exited.
    public var terminationStatus: Int32? { exit.value }

    /// Sends `signal` to the process, if it still runs.
    public func signal(_ signal: Int32) {
        if isRunning { Foundation.kill(processIdentifier, signal) }
    }

    /// Waits until the process exits, at most `timeout`; its exit status.
    ///
    /// - Throws: ``ProcessError`` if it still runs after `timeout` (it is left running).
    @discardableResult
    public func exitStatus(within timeout: Duration) async throws -> Int32 {
        guard let status = await exit.wait(timeout: timeout) else {
            throw ProcessError("\(name) (pid \(processIdentifier)) still runs after \(timeout)")
        }
        Self.logger.debug("exited", metadata: ["process": "\(name)", "pid": "\(processIdentifier)", "status": "\(status)"])
        return status
    }

    /// Sends SIGTERM and waits for the exit, at most `timeout`; a process still running
    /// then is SIGKILLed and the wait fails.
    @discardableResult
    public func terminate(within timeout: Duration = .seconds(30)) async throws -> Int32 {
        if isRunning { process.terminate() }
        do {
            return try await exitStatus(within: timeout)
        } catch {
            _ = try? await kill()
            throw ProcessError("\(name) (pid \(processIdentifier)) did not stop on SIGTERM within \(timeout); killed")
        }
    }

    /// Sends SIGKILL and waits for the exit, at most `timeout`.
    @discardableResult
    public func kill(within timeout: Duration = .seconds(10)) async throws -> Int32 {
        signal(SIGKILL)
        return try await exitStatus(within: timeout)
    }

    deinit {
        signal(SIGKILL)
    }
}

extension RunningProcess {
    /// What a finished command wrote and how it ended.
    public struct Result: Sendable {
        public let status: Int32
        public let standardOutput: String
        public let standardError: String
    }

    /// Runs `executable` with `arguments` to its end, its output captured in files (never a
    /// pipe that could fill up). One still running after `timeout` is stopped with SIGTERM,
    /// and its status is what that gives.
    public static func run(_ executable: String, _ arguments: [String] = [], timeout: Duration = .seconds(60)) async throws -> Result {
        let directory = try TemporaryDirectory.create("eventbus-run")
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("stdout").path, errors = directory.appendingPathComponent("stderr").path
        let process = try RunningProcess(executable, arguments, standardOutput: .file(output), standardError: .file(errors))
        let status: Int32
        do {
            status = try await process.exitStatus(within: timeout)
        } catch {
            status = try await process.terminate()
        }
        func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        return Result(status: status, standardOutput: read(output), standardError: read(errors))
    }
}
