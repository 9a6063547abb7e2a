import EventBus
import EventBusBroker
import EventBusSupervisor
import EventBusTesting
import Foundation
import Testing
import ZeroMQ

/// `eventbus up` with keys: the supervisor generates a key per plugin, the
/// plugins connect with them through the SDK, and events flow end to end.
@Suite(.serialized) struct SecuritySupervisorTests {
    @Test func theUpConfigFileNamesTheSecurityFileAndTheInsecureBindOption() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-upsec-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let broker = try CurveKeyPair.generate(), client = try CurveKeyPair.generate()
        try CurveKeyFile.write(broker.secretKey, comment: "test", to: directory.path + "/broker.secret", mode: 0o600)
        try "secret_key_file: broker.secret\nclients:\n  - name: ops\n    public_key: \"\(client.publicKey)\"\n    roles: [admin, backend]\n"
            .write(to: directory.appendingPathComponent("security.yaml"), atomically: true, encoding: .utf8)
        let config = directory.appendingPathComponent("up.yaml")
        try "security: security.yaml\nallow_insecure_bind: true\n".write(to: config, atomically: true, encoding: .utf8)
        let (loaded, _) = try SupervisorConfig.load(path: config.path, base: BrokerConfig(), pluginDirectory: directory.path)
        #expect(loaded.allowInsecureBind)
        #expect(loaded.security?.secretKey == broker.secretKey)
        #expect(loaded.security?.clients == [.init(name: "ops", publicKey: client.publicKey, roles: [.admin, .backend])])
    }

    @Test func supervisedPluginsGetKeysAndTheirRolesAndEventsFlow() async throws {
        let broker = try CurveKeyPair.generate(), backend = try CurveKeyPair.generate(), admin = try CurveKeyPair.generate()
        let pipeline = try SupervisedPipeline([
            SupervisedPipeline.plugin("first", executable: "identity"),
            SupervisedPipeline.plugin("second", executable: "identity"),
        ]) { config in
            config.broker.security = SecurityConfig(secretKey: broker.secretKey, clients: [
                .init(name: "backend", publicKey: backend.publicKey, roles: [.backend]),
                .init(name: "ops", publicKey: admin.publicKey, roles: [.admin]),
            ])
        }
        try await pipeline.stopAfter {
            // Ready means the supervisor's own admin key read STATS and both
            // plugins attached their consumers with the keys they were handed.
            try await pipeline.waitUntilReady()

            // Handed through the environment, never on a command line (which any local user reads in /proc).
            for stage in ["first", "second"] {
                let pid = try #require(pipeline.supervisor.processIdentifier(of: stage))
                let environ = try #require(FileManager.default.contents(atPath: "/proc/\(pid)/environ"))
                let cmdline = try #require(FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"))
                let prefix = Array("\(CurveClientKeys.secretKeyVariable)=".utf8)
                let entry = try #require(environ.split(separator: 0).first { $0.starts(with: prefix) }, "\(stage) got no secret key")
                let secret = Array(entry.dropFirst(prefix.count))
                #expect(secret.count == 40)
                #expect(cmdline.split(separator: 0).allSatisfy { !Array($0).contains(secret) && !$0.starts(with: prefix) },
                        "\(stage)'s secret key is on its command line")
            }

            func peer(_ keys: CurveKeyPair) throws -> Socket {
                let socket = try Socket(context: pipeline.context, type: .dealer)
                try socket.setLinger(0)
                try socket.setReceiveTimeout(20_000)
                try CurveClientKeys(secretKey: keys.secretKey, serverKey: broker.publicKey).apply(to: socket)
                try socket.connect(pipeline.supervisor.commandEndpoint)
                return socket
            }
            let publisher = try peer(backend)
            defer { publisher.close() }
            #expect(try outcome(publisher, ["EB1", "PUB", "p", "in"], events: (1...5).map { SupervisedPipeline.event($0) }) == "OK")

            let reader = try peer(admin)
            defer { reader.close() }
            #expect(try outcome(reader, ["EB1", "CONSUME", "c", "check-out", "earliest", "100", "out/"]) == "OK")
            var ids: [String] = []
            while ids.count < 5, let frames = try reader.receive() {
                guard frames.count == 6, frames[1] == Array("EVT".utf8) else { continue }
                ids.append(try EventValidator.validate(frames[5], stage: "any").envelope.id)
            }
            #expect(ids == ["e1", "e2", "e3", "e4", "e5"])

            // Nothing the plugins did was refused, and a client in the clear gets nothing.
            #expect(try outcome(reader, ["EB1", "STATS", "s"]) == "OK")
            try reader.send(["EB1", "STATS", "s2"].map { Array($0.utf8) })
            let stats = try #require(try reader.receive())
            #expect(try JSONParser.parse(stats[3])["forbidden"]?.doubleValue == 0)
            let clear = try pipeline.peer(timeout: 1_000)
            defer { clear.close() }
            #expect(try outcome(clear, ["EB1", "PING", "p"]) == "none")
        }
    }
}
