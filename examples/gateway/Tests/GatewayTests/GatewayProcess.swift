import Foundation

/// A real `chat-gateway` process on an ephemeral port, started from the build folder.
final class GatewayProcess: @unchecked Sendable {
    let busEndpoint: String
    let consumer: String
    let directory: URL
    private(set) var process: Process?
    private(set) var port = 0

    static var binary: String { BuildFolder.example("gateway") + "/chat-gateway" }

    init(busEndpoint: String, consumer: String = "chat-gateway", queueLimit: Int? = nil) throws {
        self.busEndpoint = busEndpoint
        self.consumer = consumer
        self.queueLimit = queueLimit
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("chat-gateway-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    private let queueLimit: Int?
    private var stdoutFile: URL { directory.appendingPathComponent("stdout") }
    private var stderrFile: URL { directory.appendingPathComponent("stderr") }

    /// What the gateway logged so far.
    var log: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

    /// The base websocket URL.
    var webSocketURL: String { "ws://127.0.0.1:\(port)/ws" }

    /// Starts the gateway and waits for its ready line.
    func start() throws {
        _ = FileManager.default.createFile(atPath: stdoutFile.path, contents: nil)
        if !FileManager.default.fileExists(atPath: stderrFile.path) {
            _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["--http", "127.0.0.1:0", "--command", busEndpoint, "--consumer", consumer, "--log-level", "warning"]
            + (queueLimit.map { ["--queue-limit", String($0)] } ?? [])
        process.standardOutput = try FileHandle(forWritingTo: stdoutFile)
        let errors = try FileHandle(forWritingTo: stderrFile)
        errors.seekToEndOfFile()
        process.standardError = errors
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            guard process.isRunning else { throw ProcessError("chat-gateway exited: \(log)") }
            let text = (try? String(contentsOf: stdoutFile, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.contains("listening on") }),
               let address = line.split(separator: " ").dropFirst(3).first, let colon = address.lastIndex(of: ":"),
               let bound = Int(address[address.index(after: colon)...]) {
                port = bound
                return
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw ProcessError("chat-gateway did not print its ready line within 30 s: \(log)")
    }

    /// Kills the gateway with SIGKILL.
    func kill() {
        guard let process, process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: directory)
    }
}
