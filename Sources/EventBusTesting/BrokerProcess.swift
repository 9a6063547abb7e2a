import EventBus
import Foundation
import Logging
import ZeroMQ

/// A real `eventbus broker` process on ipc endpoints in its own temporary directory
/// (or on the endpoints given), started again as often as a test wants; its stderr,
/// over all its runs, is ``log``. SIGKILLed and its directory removed when it goes.
public final class BrokerProcess: @unchecked Sendable {
    public let directory: URL
    public let commandEndpoint: String
    public let streamEndpoint: String
    public let extraArguments: [String]
    /// The keys the readiness probe connects with, for a broker started with `--security`.
    public let probeKeys: CurveClientKeys?
    /// The current (or last) run.
    public private(set) var process: RunningProcess?
    private var stderrFile: URL { directory.appendingPathComponent("broker.stderr") }
    private let logger = Logger(label: "eventbus.testing.broker")

    public init(arguments: [String] = [], command: String? = nil, stream: String? = nil, probeKeys: CurveClientKeys? = nil) throws {
        directory = try TemporaryDirectory.create("eventbus-it")
        commandEndpoint = command ?? EphemeralEndpoint.ipc(in: directory, "command")
        streamEndpoint = stream ?? EphemeralEndpoint.ipc(in: directory, "stream")
        extraArguments = arguments
        self.probeKeys = probeKeys
    }

    public var dataDirectory: String { directory.appendingPathComponent("data").path }

    /// Starts the broker and waits until its command socket answers PING, at most `timeout`.
    public func start(context: Context, within timeout: Duration = .seconds(20)) async throws {
        let process = try RunningProcess(
            BuildFolder.eventbus,
            ["broker", "--data-dir", dataDirectory, "--command", commandEndpoint, "--stream", streamEndpoint] + extraArguments,
            standardError: .file(stderrFile.path))
        self.process = process
        logger.debug("broker started", metadata: ["pid": "\(process.processIdentifier)", "command": "\(commandEndpoint)"])
        var patience = Patience(timeout)
        let probe = try Socket(context: context, type: .dealer)
        defer { probe.close() }
        try probe.setLinger(0)
        try probeKeys?.apply(to: probe)
        try probe.connect(commandEndpoint)
        var looks = 0
        repeat {
            guard process.isRunning else { throw ProcessError("broker exited: \(log)") }
            // A PING every 20 looks (about 200 ms), its answer polled for at each.
            if looks % 20 == 0 { try probe.send([Array("EB1".utf8), Array("PING".utf8), Array("probe".utf8)]) }
            looks += 1
            if let reply = try probe.receive(dontWait: true), reply.count == 3 { return }
            try await Task.sleep(for: .milliseconds(10))  // a poll interval
        } while patience.allowsAnotherLook()
        throw ProcessError("broker did not answer PING within \(timeout): \(log)")
    }

    /// What the broker wrote to stderr so far, over all its runs.
    public var log: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

    /// Kills the broker with SIGKILL and waits for it to be gone.
    public func kill() async throws {
        guard let process else { return }
        try await process.kill()
    }

    /// Stops the broker with SIGTERM and returns its exit status (-1 if it never started).
    @discardableResult
    public func terminate() async throws -> Int32 {
        guard let process else { return -1 }
        return try await process.terminate()
    }

    /// Runs `body`, then stops the broker (``terminate()``) whether `body` threw or not:
    /// the `defer` of a test whose cleanup must be awaited.
    public func terminateAfter<T>(_ body: () async throws -> T) async throws -> T {
        try await awaitingCleanup(body) { _ = try await self.terminate() }
    }

    deinit {
        process?.signal(SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }
}
