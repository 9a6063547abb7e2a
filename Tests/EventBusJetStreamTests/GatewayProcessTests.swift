import EventBus
import EventBusJetStream
import Foundation
import Logging
import NATS
import Synchronization
import Testing

/// `eventbus gateway` as a process: SIGKILLed while publishing, and pointed at nothing.
@Suite(.serialized) struct GatewayProcessTests {
    /// The `eventbus` binary: `$EVENTBUS_BIN`, or the debug build beside the tests.
    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["EVENTBUS_BIN"] { return path }
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while folder.path != "/" && !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
            folder.deleteLastPathComponent()
        }
        return folder.appendingPathComponent(".build/debug/eventbus").path
    }

    static func gateway(_ arguments: [String], stderr: URL? = nil) throws -> Process {
        try eventbus(["gateway"] + arguments, stderr: stderr)
    }

    /// `eventbus` with `arguments` (its subcommand first), started; its stderr to `stderr`
    /// (emptied first), or nowhere.
    static func eventbus(_ arguments: [String], stderr: URL? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try stderr.map { url in
            _ = FileManager.default.createFile(atPath: url.path, contents: nil)
            return try FileHandle(forWritingTo: url)
        } ?? FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Waits until `process` has exited, at most `seconds`, by polling: never an unbounded
    /// `waitUntilExit`, which would hang the suite on a gateway that does not stop.
    static func reap(_ process: Process, within seconds: Double = 30) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(10_000) }  // a poll interval
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            throw TestFailure("the gateway (pid \(process.processIdentifier)) still ran after \(Int(seconds)) s; killed")
        }
    }

    @Test func anUnreachableClusterEndsTheGatewayNamingTheAddress() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-gw-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("stderr")
        let address = "nats://127.0.0.1:1"
        let process = try Self.gateway(["--backend", address, "--endpoint", "ipc://\(directory.path)/gw.sock"], stderr: log)
        try Self.reap(process)
        #expect(process.terminationStatus != 0)
        let text = try String(contentsOf: log, encoding: .utf8)
        #expect(text.contains(address), "stderr: \(text)")
    }

    /// A timeout or size of 0 is refused before anything starts, with the option's name.
    @Test(arguments: ["--publish-timeout-ms", "--request-timeout-ms", "--ack-wait", "--dedup-window", "--max-event-bytes"])
    func aZeroOptionIsRefusedNamingIt(option: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-gw-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("stderr")
        let process = try Self.gateway(
            ["--backend", "nats://127.0.0.1:1", "--endpoint", "ipc://\(directory.path)/gw.sock", option, "0"], stderr: log)
        try Self.reap(process)
        #expect(process.terminationStatus != 0)
        let text = try String(contentsOf: log, encoding: .utf8)
        #expect(text.contains("\(option) must be positive"), "stderr: \(text)")
        #expect(!text.contains("127.0.0.1:1"), "refused before connecting: \(text)")
    }

    /// `--backend @FILE` (DATA/users/gateway.url): the gateway serves with the user's
    /// password, and its command line, which `ps` shows to everyone, holds none.
    @Test func aGatewayReadsItsBackendFromAFileKeepingThePasswordOutOfPs() async throws {
        let users = try ClusterUsers(plugins: [])
        let test = try TestCluster(nodes: 1, users: users)
        let file = "\(test.directory)/users/gateway.url"
        #expect(FileManager.default.fileExists(atPath: file))
        let endpoint = "ipc://\(test.directory)/gateway.sock"
        let gateway = try Self.gateway(["--backend", "@" + file, "--endpoint", endpoint, "--log-level", "warning"])
        defer { if gateway.isRunning { kill(gateway.processIdentifier, SIGKILL) } }
        let client = try BusClient(options: BusClientOptions(endpoint: endpoint, requestTimeout: .seconds(30)))
        defer { client.close() }
        #expect(try await client.publish(GatewayTests.event("f1")) == 1)
        let commandLine = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(gateway.processIdentifier)/cmdline"))
        let arguments = String(decoding: commandLine, as: UTF8.self)
        #expect(arguments.contains(file) && !arguments.contains(users.passwords[.gateway]!))
        kill(gateway.processIdentifier, SIGTERM)
        try Self.reap(gateway)
    }

    /// `eventbus up --backend @FILE` reads the same way, and so does `--backend-users` each
    /// plugin's URL file; a file it cannot read stops it at once, naming the file.
    @Test func upWithABackendFileItCannotReadExitsNamingIt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-gw-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("stderr")
        /// `eventbus up` with `backend` (its --backend… flags), which must exit non-zero: its stderr.
        func upRefused(_ backend: [String]) throws -> String {
            let up = try Self.eventbus(["up"] + backend + ["--data-dir", directory.appendingPathComponent("data").path,
                                                          "--command", "ipc://\(directory.path)/up.sock", "--pipeline", "receipt-reducer"],
                                       stderr: log)
            try Self.reap(up)
            #expect(up.terminationStatus != 0)
            return try String(contentsOf: log, encoding: .utf8)
        }
        let missing = directory.appendingPathComponent("users/gateway.url").path
        let text = try upRefused(["--backend", "@" + missing])
        #expect(text.contains("cannot read \(missing)"), "stderr: \(text)")

        // A plugin's user file is read the same way; one that is missing is named, with the fix.
        let users = directory.appendingPathComponent("users").path
        let told = try upRefused(["--backend", "nats://127.0.0.1:1", "--backend-users", users])
        #expect(told.contains("--backend-users: no \(users)/plugin-receipt-reducer.url"), "stderr: \(told)")
    }

    @Test func aGatewayKilledMidPublishLosesNothingItConfirmed() async throws {
        let test = try TestCluster(nodes: 3)
        let endpoint = "ipc://\(test.directory)/gateway.sock"
        let arguments = ["--backend", test.urls.joined(separator: ","), "--endpoint", endpoint, "--log-level", "warning"]
        var gateway = try Self.gateway(arguments)
        defer { if gateway.isRunning { kill(gateway.processIdentifier, SIGKILL) } }

        let client = try BusClient(options: BusClientOptions(endpoint: endpoint, requestTimeout: .seconds(4)))
        defer { client.close() }
        let ids = (0..<400).map { "k\($0)" }
        // Eight publishers one event at a time; the gateway dies after 100 confirms.
        let tally = Tally()
        let processIdentifier = gateway.processIdentifier
        await withTaskGroup(of: Void.self) { group in
            for lane in 0..<8 {
                group.addTask {
                    for index in stride(from: lane, to: ids.count, by: 8) {
                        if tally.killed.load(ordering: .relaxed) { return }
                        guard let seq = try? await client.publish(GatewayTests.event(ids[index])) else { continue }
                        let count = tally.confirmed.withLock { confirmed in
                            confirmed[ids[index]] = seq
                            return confirmed.count
                        }
                        if count >= 100, tally.killed.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
                            kill(processIdentifier, SIGKILL)
                        }
                    }
                }
            }
        }
        try Self.reap(gateway)
        #expect(gateway.terminationReason == .uncaughtSignal)
        let before = tally.confirmed.withLock { $0 }
        #expect(before.count >= 100)

        // A new gateway on the same endpoint; the client reconnects by itself. Everything
        // is published again: what was confirmed keeps its SEQ, nothing is stored twice.
        gateway = try Self.gateway(arguments)
        var after: [String: UInt64] = [:]
        for chunk in stride(from: 0, to: ids.count, by: 100) {
            let batch = Array(ids[chunk..<min(chunk + 100, ids.count)])
            var seqs: [UInt64]?
            for _ in 0..<20 where seqs == nil {
                seqs = try? await client.publish(batch.map { GatewayTests.event($0) })
            }
            let answered = try #require(seqs)
            for (id, seq) in zip(batch, answered) { after[id] = seq }
        }
        for (id, seq) in before { #expect(after[id] == seq, "\(id) was confirmed as \(seq), now \(String(describing: after[id]))") }
        #expect(Set(after.values).count == ids.count)

        let connection = try Connection(ConnectOptions(servers: test.urls, allowReconnect: false))
        defer { connection.close() }
        let info = try JetStream(connection: connection).streamInfo(StageStream(stage: "in").name)
        #expect(info.messages == UInt64(ids.count))
        #expect(info.lastSequence == UInt64(ids.count))
        kill(gateway.processIdentifier, SIGTERM)
        try Self.reap(gateway)
        #expect(gateway.terminationStatus == 0)
    }
}

/// What the publishers of the kill test share.
private final class Tally: Sendable {
    let confirmed = Mutex<[String: UInt64]>([:])
    let killed = Atomic<Bool>(false)
}
