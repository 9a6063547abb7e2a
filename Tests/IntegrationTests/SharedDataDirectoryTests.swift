import EventBusBroker
import EventBusSupervisor
import EventBusTesting
import Foundation
import Testing
import ZeroMQ

/// `eventbus broker` and `eventbus up` refuse a data directory other local users
/// could read (as `mkdir` makes it under umask 022), unless told to accept it.
@Suite(.serialized) struct SharedDataDirectoryTests {
    @Test func theBrokerRefusesA0755DataDirectoryNamingTheWayOutAndTheOptionAllowsIt() async throws {
        let broker = try BrokerProcess(arguments: ["--allow-shared-data-dir", "--log-level", "error"])
        let data = broker.dataDirectory
        try #require(mkdir(data, 0o700) == 0 && chmod(data, 0o755) == 0)
        let refused = try await SecureBus.run(["broker", "--data-dir", data, "--command", broker.commandEndpoint,
                                         "--stream", broker.streamEndpoint], timeout: 20)
        #expect(refused.code != 0)
        for part in ["refusing to use the data directory \(data)", "0755", "chmod 700 \(data)", "--allow-shared-data-dir"] {
            #expect(refused.stderr.contains(part), "\(part) not in: \(refused.stderr)")
        }
        let up = try await SecureBus.run(["up", "--data-dir", data, "--command", broker.commandEndpoint, "--stream", broker.streamEndpoint,
                                    "--pipeline", "external:audit"], timeout: 20)
        #expect(up.code != 0)
        #expect(up.stderr.contains("chmod 700 \(data)"), "\(up.stderr)")

        try await broker.start(context: try Context())
        let stopped = try await broker.terminate()
        #expect(stopped == 0)
        var status = stat()
        try #require(stat(data, &status) == 0)
        #expect(status.st_mode & 0o7777 == 0o755, "the option leaves the directory as it is")
    }

    @Test func theUpConfigFileTakesAllowSharedDataDir() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-upshared-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("up.yaml")
        try "allow_shared_data_dir: true\n".write(to: config, atomically: true, encoding: .utf8)
        let (loaded, _) = try SupervisorConfig.load(path: config.path, base: BrokerConfig(), pluginDirectory: directory.path)
        #expect(loaded.allowSharedDataDirectory)
        #expect(!BrokerConfig().allowSharedDataDirectory, "refused by default")
        try "allow_shared_data_dir: please\n".write(to: config, atomically: true, encoding: .utf8)
        let error = #expect(throws: PipelineError.self) {
            try SupervisorConfig.load(path: config.path, base: BrokerConfig(), pluginDirectory: directory.path)
        }
        #expect(error?.description.contains("allow_shared_data_dir must be true or false") == true)
    }
}
