import EventBus
import Foundation
import ZeroMQ

/// A real `eventbus broker` process on ipc endpoints in its own directory.
final class BrokerProcess: @unchecked Sendable {
    let directory: URL
    let commandEndpoint: String
    let streamEndpoint: String
    let extraArguments: [String]
    /// The keys the readiness probe connects with, for a broker started with `--security`.
    let probeKeys: CurveClientKeys?
    private(set) var process: Process?
    private var stderrFile: URL { directory.appendingPathComponent("broker.stderr") }

    static var binary: String {
        ProcessInfo.processInfo.environment["EVENTBUS_BIN"] ?? BuildFolder.bus + "/eventbus"
    }

    init(arguments: [String] = [], command: String? = nil, stream: String? = nil, probeKeys: CurveClientKeys? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-it-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        commandEndpoint = command ?? "ipc://\(directory.path)/command.sock"
        streamEndpoint = stream ?? "ipc://\(directory.path)/stream.sock"
        extraArguments = arguments
        self.probeKeys = probeKeys
    }

    var dataDirectory: String { directory.appendingPathComponent("data").path }

    /// Starts the broker and waits until its command socket answers PING.
    func start(context: Context) throws {
        if !FileManager.default.fileExists(atPath: stderrFile.path) {
            _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["broker", "--data-dir", dataDirectory, "--command", commandEndpoint,
                             "--stream", streamEndpoint] + extraArguments
        let handle = try FileHandle(forWritingTo: stderrFile)
        handle.seekToEndOfFile()
        process.standardError = handle
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(20)
        let probe = try Socket(context: context, type: .dealer)
        defer { probe.close() }
        try probe.setLinger(0)
        try probe.setReceiveTimeout(200)
        try probeKeys?.apply(to: probe)
        try probe.connect(commandEndpoint)
        while Date() < deadline {
            guard process.isRunning else { throw ProcessError("broker exited: \(log)") }
            try probe.send([Array("EB1".utf8), Array("PING".utf8), Array("probe".utf8)])
            if let reply = try probe.receive(), reply.count == 3 { return }
        }
        throw ProcessError("broker did not answer PING within 20 s: \(log)")
    }

    /// What the broker wrote to stderr so far, over all its runs.
    var log: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

    /// Kills the broker with SIGKILL and waits for it to be gone.
    func kill() {
        guard let process, process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Stops the broker with SIGTERM and returns its exit status.
    @discardableResult
    func terminate() -> Int32 {
        guard let process else { return -1 }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: directory)
    }
}

struct ProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
