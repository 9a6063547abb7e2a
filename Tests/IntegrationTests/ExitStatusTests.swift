import EventBusTesting
import Foundation
import Testing
import ZeroMQ

/// `eventbus broker`, `up` and `recover` exit with a status chosen by the
/// error's code (docs/operations.md, "Exit statuses"): 78 for a setting to
/// fix, 75 for something another process holds now, 65 for a log that lost
/// records, 1 for the rest.
@Suite(.serialized) struct ExitStatusTests {
    static func eventbus(_ arguments: [String]) async throws -> RunningProcess.Result {
        try await RunningProcess.run(BuildFolder.eventbus, arguments + ["--log-level", "error"], timeout: .seconds(30))
    }

    static func recover(_ directory: String) async throws -> RunningProcess.Result {
        try await RunningProcess.run(BuildFolder.eventbus, ["recover", "--data-dir", directory], timeout: .seconds(30))
    }

    @Test func settingsToFixExit78() async throws {
        try await TemporaryDirectory.with("exit-config") { root in
            let shared = root.appendingPathComponent("shared").path
            try #require(mkdir(shared, 0o700) == 0 && chmod(shared, 0o755) == 0)
            let ports = try EphemeralEndpoint.freePorts(2)
            let endpoints = ["--command", "tcp://127.0.0.1:\(ports[0])", "--stream", "tcp://127.0.0.1:\(ports[1])"]
            let broker = try await Self.eventbus(["broker", "--data-dir", shared] + endpoints)
            #expect(broker.status == 78, "\(broker.standardError)")
            let up = try await Self.eventbus(["up", "--data-dir", shared, "--pipeline", "external:audit"] + endpoints)
            #expect(up.status == 78, "\(up.standardError)")

            let data = root.appendingPathComponent("data").path
            let open = try await Self.eventbus(["broker", "--data-dir", data, "--command", "tcp://0.0.0.0:\(ports[0])",
                                                "--stream", "tcp://127.0.0.1:\(ports[1])"])
            #expect(open.status == 78, "\(open.standardError)")
            #expect(open.standardError.contains("refusing to bind"))
            let plugin = try await Self.eventbus(["up", "--data-dir", data, "--pipeline", "no-such-plugin"] + endpoints)
            #expect(plugin.status == 78, "\(plugin.standardError)")
            #expect(plugin.standardError.contains("unknown plugin"))
            // A malformed --pipeline is a command line to fix: the parser's own 64.
            let usage = try await Self.eventbus(["up", "--data-dir", data, "--pipeline", "out"] + endpoints)
            #expect(usage.status == 64, "\(usage.standardError)")
        }
    }

    @Test func aDataDirectoryOrEndpointInUseExits75AndALogThatLostRecordsExits65() async throws {
        let running = try BrokerProcess(arguments: ["--log-level", "error"])
        try await running.start(context: try Context())
        try await running.terminateAfter {
            let ports = try EphemeralEndpoint.freePorts(2)
            let second = try await Self.eventbus(["broker", "--data-dir", running.dataDirectory,
                                                  "--command", "tcp://127.0.0.1:\(ports[0])", "--stream", "tcp://127.0.0.1:\(ports[1])"])
            #expect(second.status == 75, "\(second.standardError)")
            #expect(second.standardError.contains("in use by another broker"))
            let recover = try await Self.recover(running.dataDirectory)
            #expect(recover.status == 75, "\(recover.standardError)")
            // A TCP port another process holds, from another data directory: 75 too.
            let holder = try Socket(context: try Context(), type: .router)
            defer { holder.close() }
            try holder.setLinger(0)
            try holder.bind("tcp://127.0.0.1:\(ports[0])")
            try await TemporaryDirectory.with("exit-port") { root in
                let taken = try await Self.eventbus(["broker", "--data-dir", root.appendingPathComponent("data").path,
                                                     "--command", "tcp://127.0.0.1:\(ports[0])", "--stream", "tcp://127.0.0.1:\(ports[1])"])
                #expect(taken.status == 75, "\(taken.standardError)")
            }
            // The running broker's ipc socket file, from another data directory: 75, named.
            try await TemporaryDirectory.with("exit-ipc") { root in
                let taken = try await Self.eventbus(["broker", "--data-dir", root.appendingPathComponent("data").path,
                                                     "--command", running.commandEndpoint, "--stream", "tcp://127.0.0.1:\(ports[1])"])
                #expect(taken.status == 75, "\(taken.standardError)")
                #expect(taken.standardError.contains("another process listens on that socket file"), "\(taken.standardError)")
            }
        }

        try await TemporaryDirectory.with("exit-lost") { root in
            // A consumer has seen SEQ 10 of a log that holds nothing: records were lost.
            let data = root.appendingPathComponent("data").path
            try #require(mkdir(data, 0o700) == 0)
            try #"{"reader":10}"#.write(toFile: data + "/consumers.json", atomically: true, encoding: .utf8)
            let ports = try EphemeralEndpoint.freePorts(2)
            let refused = try await Self.eventbus(["broker", "--data-dir", data,
                                                   "--command", "tcp://127.0.0.1:\(ports[0])", "--stream", "tcp://127.0.0.1:\(ports[1])"])
            #expect(refused.status == 65, "\(refused.standardError)")
            #expect(refused.standardError.contains("eventbus recover"))
            // After `eventbus recover` (exit 0), the same start is no longer refused for lost records.
            let recovered = try await Self.recover(data)
            #expect(recovered.status == 0, "\(recovered.standardError)")
        }
    }
}
