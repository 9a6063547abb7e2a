import EventBusTesting
import Foundation

/// A real `chat-gateway` process on an ephemeral port, started from the build folder.
final class GatewayProcess: @unchecked Sendable {
    let busEndpoint: String
    let consumer: String
    let directory: URL
    private(set) var process: RunningProcess?
    private(set) var port = 0

    static var binary: String { BuildFolder.example("gateway") + "/chat-gateway" }

    init(busEndpoint: String, consumer: String = "chat-gateway", queueLimit: Int? = nil) throws {
        self.busEndpoint = busEndpoint
        self.consumer = consumer
        self.queueLimit = queueLimit
        directory = try TemporaryDirectory.create("chat-gateway")
    }

    private let queueLimit: Int?
    private var stdoutFile: URL { directory.appendingPathComponent("stdout") }
    private var stderrFile: URL { directory.appendingPathComponent("stderr") }

    /// What the gateway logged so far.
    var log: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

    /// The base websocket URL.
    var webSocketURL: String { "ws://127.0.0.1:\(port)/ws" }

    /// Starts the gateway and waits for its ready line.
    func start() async throws {
        // Each run's own stdout (its ready line); stderr over all runs.
        _ = FileManager.default.createFile(atPath: stdoutFile.path, contents: nil)
        let process = try RunningProcess(
            Self.binary,
            ["--http", "127.0.0.1:0", "--command", busEndpoint, "--consumer", consumer, "--log-level", "warning"]
                + (queueLimit.map { ["--queue-limit", String($0)] } ?? []),
            standardOutput: .file(stdoutFile.path), standardError: .file(stderrFile.path))
        self.process = process
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            guard process.isRunning else { throw ProcessError("chat-gateway exited: \(log)") }
            let text = (try? String(contentsOf: stdoutFile, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.contains("listening on") }),
               let address = line.split(separator: " ").dropFirst(3).first, let colon = address.lastIndex(of: ":"),
               let bound = Int(address[address.index(after: colon)...]) {
                port = bound
                return
            }
            try await Task.sleep(for: .milliseconds(50))  // a poll interval
        }
        throw ProcessError("chat-gateway did not print its ready line within 30 s: \(log)")
    }

    /// Kills the gateway with SIGKILL and waits for it to be gone.
    func kill() async throws {
        guard let process else { return }
        try await process.kill()
    }

    deinit {
        process?.signal(SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }
}
