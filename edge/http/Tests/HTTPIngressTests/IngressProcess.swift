import EventBusTesting
import Foundation

/// A real `eventbus-http` process on a free loopback port, started from its build folder
/// (``BuildFolder/http``); its port is read from its ready line.
final class IngressProcess: @unchecked Sendable {
    let directory: URL
    let arguments: [String]
    let environment: [String: String]
    private(set) var process: RunningProcess?
    private(set) var port = 0

    /// - Parameters:
    ///   - command: The broker's command endpoint.
    ///   - arguments: More flags, such as `--security FILE`.
    init(command: String, arguments: [String] = [], environment: [String: String] = [:]) throws {
        directory = try TemporaryDirectory.create("eventbus-http")
        self.arguments = ["--command", command, "--log-level", "warning"] + arguments
        self.environment = environment
    }

    private var stdoutFile: URL { directory.appendingPathComponent("stdout") }
    private var stderrFile: URL { directory.appendingPathComponent("stderr") }

    /// What it logged so far.
    var log: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }
    /// What it printed so far.
    var output: String { (try? String(contentsOf: stdoutFile, encoding: .utf8)) ?? "" }

    /// `http://127.0.0.1:PORT`.
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts it listening on `listen` and waits for its ready line.
    func start(listen: String = "127.0.0.1:0") async throws {
        _ = FileManager.default.createFile(atPath: stdoutFile.path, contents: nil)
        let process = try RunningProcess(BuildFolder.http, ["--listen", listen] + arguments, environment: environment,
                                         standardOutput: .file(stdoutFile.path), standardError: .file(stderrFile.path))
        self.process = process
        var patience = Patience(.seconds(30))
        repeat {
            guard process.isRunning else { throw ProcessError("eventbus-http exited: \(log)") }
            if let bound = Self.port(inReadyLine: output) {
                port = bound
                return
            }
            try await Task.sleep(for: .milliseconds(50))  // a poll interval
        } while patience.allowsAnotherLook()
        throw ProcessError("eventbus-http printed no ready line within 30 s: \(log)")
    }

    /// The port of the line `eventbus-http listening on http[s]://HOST:PORT (bus …)` in `text`.
    static func port(inReadyLine text: String) -> Int? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("eventbus-http listening on http://") || $0.hasPrefix("eventbus-http listening on https://") }),
              let url = line.split(separator: " ").dropFirst(3).first, let colon = url.lastIndex(of: ":") else { return nil }
        return Int(url[url.index(after: colon)...])
    }

    /// Stops it with SIGTERM and returns its exit status.
    @discardableResult
    func terminate() async throws -> Int32 {
        guard let process else { return -1 }
        return try await process.terminate()
    }

    deinit {
        process?.signal(SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }
}
