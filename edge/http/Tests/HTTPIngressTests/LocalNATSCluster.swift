import EventBusTesting
import Foundation

/// A one-node JetStream cluster as a user starts one: `eventbus cluster up --nodes 1`
/// (docs/scale-out.md), on a free loopback port, in a directory of its own. `nats-server` is
/// `$EVENTBUS_NATS_SERVER` or the first on `PATH`, which `make test` installs.
struct LocalNATSCluster {
    let directory: URL
    let process: RunningProcess
    /// What `cluster up` printed once JetStream had a meta leader: the value of `--backend`.
    let urls: String

    /// Runs `body` with a cluster, stopped and removed after.
    static func with<T>(_ body: (LocalNATSCluster) async throws -> T) async throws -> T {
        let cluster = try await start()
        do {
            let result = try await body(cluster)
            await cluster.stop()
            return result
        } catch {
            await cluster.stop()
            throw error
        }
    }

    private static func start() async throws -> LocalNATSCluster {
        let directory = try TemporaryDirectory.create("eventbus-http-nats")
        let output = directory.appendingPathComponent("urls").path
        let log = directory.appendingPathComponent("cluster.log").path
        let process = try RunningProcess(
            BuildFolder.eventbus,
            ["cluster", "up", "--nodes", "1", "--data-dir", directory.appendingPathComponent("nats").path,
             "--base-port", String(try EphemeralEndpoint.freePort()), "--no-users"],
            standardOutput: .file(output), standardError: .file(log))
        var patience = Patience(.seconds(60))
        repeat {
            if let line = (try? String(contentsOfFile: output, encoding: .utf8))?.split(separator: "\n").first {
                return LocalNATSCluster(directory: directory, process: process, urls: String(line))
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))  // a poll interval
        } while patience.allowsAnotherLook()
        _ = try? await process.kill()
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: directory)
        throw ProcessError("eventbus cluster up printed no URLs: \(text.suffix(2_000))")
    }

    private func stop() async {
        _ = try? await process.terminate()
        try? FileManager.default.removeItem(at: directory)
    }
}
