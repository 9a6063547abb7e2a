import EventBus
import EventBusBroker
import EventBusJetStream
import EventBusTesting
import Foundation
import Testing
import ZeroMQ

/// `eventbus gateway --security FILE`: the broker's keys and roles (docs/security.md) on the
/// gateway's ROUTER, so that it may face a network. The same ``BrokerAccess`` decides.
@Suite(.serialized) struct GatewaySecurityTests {
    @Test func keysAndRolesHoldOnTheGateway() async throws {
        try await withDeadline(.seconds(300)) {
            let test = try TestCluster(nodes: 1)
            let keys = try (0..<4).map { _ in try CurveKeyPair.generate() }
            var config = GatewayConfig(servers: test.urls, commandEndpoint: "tcp://127.0.0.1:*", pipeline: ["receipt-reducer"])
            config.security = SecurityConfig(secretKey: keys[0].secretKey, clients: [
                .init(name: "chat-api", publicKey: keys[1].publicKey, roles: [.backend]),
                .init(name: "app", publicKey: keys[2].publicKey, roles: [.subscriber]),
            ])
            let running = try RunningGateway(config)
            defer { running.stop() }
            let endpoint = running.gateway.commandEndpoint
            func client(_ pair: CurveKeyPair, timeout: Duration = .seconds(30)) throws -> BusClient {
                try BusClient(options: BusClientOptions(endpoint: endpoint, requestTimeout: timeout,
                                                        curve: try CurveClientKeys(secretKey: pair.secretKey, serverKey: keys[0].publicKey)))
            }

            // A backend publishes to in, and may not read it.
            let backend = try client(keys[1])
            defer { backend.close() }
            #expect(try await backend.publish(GatewayTests.event("s1")) == 1)
            let consume = await #expect(throws: BusError.self) {
                _ = try await backend.consume(name: "chat-api.reader", start: .earliest, credit: 10, prefixes: ["in/"])
            }
            #expect(consume?.code == .forbidden, "\(String(describing: consume))")
            // A subscriber may not publish, and reads out under its own names only.
            let app = try client(keys[2])
            defer { app.close() }
            let publish = await #expect(throws: BusError.self) { _ = try await app.publish(GatewayTests.event("s2")) }
            #expect(publish?.code == .forbidden)
            let named = await #expect(throws: BusError.self) {
                _ = try await app.consume(name: "someone-else", start: .earliest, credit: 10, prefixes: ["out/"])
            }
            #expect(named?.code == .forbidden)
            _ = try await app.consume(name: "app.phone", start: .earliest, credit: 10, prefixes: ["out/"])

            // An unlisted key gets no answer at all: the handshake is refused.
            let stranger = try client(keys[3], timeout: .seconds(2))
            defer { stranger.close() }
            await #expect(throws: BusError.self) { _ = try await stranger.publish(GatewayTests.event("s3")) }
            // Nothing but the backend's event was stored.
            let check = try client(keys[1])
            defer { check.close() }
            #expect(try await check.publish(GatewayTests.event("s4")) == 2)
        }
    }
}

extension GatewaySecurityTests {
    /// With as many events in flight as it takes, the gateway reads no commands (the
    /// inbox-only poll) but still answers ZAP: a client that connects meanwhile completes
    /// its handshake, and is served once JetStream answers.
    @Test func handshakesAreAnsweredWhileNoCommandsAreRead() async throws {
        try await withDeadline(.seconds(300)) {
            let test = try TestCluster(nodes: 1)
            let keys = try (0..<3).map { _ in try CurveKeyPair.generate() }
            var config = GatewayConfig(servers: test.urls, commandEndpoint: "tcp://127.0.0.1:*", publishTimeout: .seconds(60),
                                       maxEventsInFlight: 1)
            config.security = SecurityConfig(secretKey: keys[0].secretKey, clients: [
                .init(name: "chat-api", publicKey: keys[1].publicKey, roles: [.backend]),
                .init(name: "ops", publicKey: keys[2].publicKey, roles: [.admin]),
            ])
            let running = try RunningGateway(config)
            defer { running.stop() }
            let context = try Context()
            func peer(_ pair: CurveKeyPair) throws -> Socket {
                let socket = try Socket(context: context, type: .dealer)
                try socket.setLinger(0)
                try socket.setReceiveTimeout(30_000)
                try CurveClientKeys(secretKey: pair.secretKey, serverKey: keys[0].publicKey).apply(to: socket)
                return socket
            }
            let backend = try peer(keys[1])
            defer { backend.close() }
            try backend.connect(running.gateway.commandEndpoint)
            _ = try backend.send(["EB1", "PING", "warm"].map { Array($0.utf8) })
            #expect(try backend.receive().map { String(decoding: $0[1], as: UTF8.self) } == "OK")

            // JetStream stops answering: the PUB stays in flight, and at the limit of 1 the
            // gateway reads no more commands; the PING behind it waits.
            let server = try #require(test.cluster.processIdentifier(of: "n1"))
            #expect(kill(server, SIGSTOP) == 0)
            var resumed = false
            defer { if !resumed { kill(server, SIGCONT) } }
            _ = try backend.send(["EB1", "PUB", "p1", "in"].map { Array($0.utf8) } + [GatewayTests.event("z1")])
            _ = try backend.send(["EB1", "PING", "behind"].map { Array($0.utf8) })

            // Another client connects now: its handshake completes all the same.
            let ops = try peer(keys[2])
            defer { ops.close() }
            let monitor = try ops.monitor(events: [.handshakeFailed, .handshakeSucceeded])
            try monitor.setReceiveTimeout(30_000)
            defer {
                ops.stopMonitor()
                monitor.close()
            }
            try ops.connect(running.gateway.commandEndpoint)
            _ = try ops.send(["EB1", "PING", "new"].map { Array($0.utf8) })
            let event = try monitor.receiveEvent()
            guard case .handshakeSucceeded? = event else {
                Issue.record("the handshake did not complete while commands were not read: \(String(describing: event))")
                return
            }
            // Still nothing read: the PUB is in flight, the PING behind it unanswered.
            #expect(try backend.receive(dontWait: true) == nil)

            // JetStream answers again: the PUB is confirmed, and both PINGs are answered.
            #expect(kill(server, SIGCONT) == 0)
            resumed = true
            let confirm = try #require(try backend.receive())
            #expect(confirm.map { String(decoding: $0, as: UTF8.self) }.prefix(3) == ["EB1", "OK", "p1"])
            #expect(try backend.receive().map { String(decoding: $0[2], as: UTF8.self) } == "behind")
            #expect(try ops.receive().map { String(decoding: $0[1], as: UTF8.self) } == "OK")
        }
    }
}

/// `eventbus up --backend … --security FILE`: the gateway inside `up` admits the file's
/// clients and this run's keys for its plugins and readiness probe (``RunKeys``).
@Suite(.serialized) struct UpOnJetStreamSecurityTests {
    @Test func thePipelineRunsWithKeysAndAStrangerIsRefused() async throws {
        try await withDeadline(.seconds(300)) {
            let directory = try TemporaryDirectory.create("eventbus-js-keys")
            defer { try? FileManager.default.removeItem(at: directory) }
            let test = try TestCluster(nodes: 1)
            let server = try CurveKeyPair.generate(), backend = try CurveKeyPair.generate(), app = try CurveKeyPair.generate()
            let secret = directory.appendingPathComponent("server.secret").path
            try (server.secretKey + "\n").write(toFile: secret, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secret)
            let file = directory.appendingPathComponent("security.yaml").path
            try """
                secret_key_file: server.secret
                clients:
                  - name: chat-api
                    public_key: "\(backend.publicKey)"
                    role: backend
                  - name: app
                    public_key: "\(app.publicKey)"
                    role: subscriber

                """.write(toFile: file, atomically: true, encoding: .utf8)
            let (up, _) = try await UpOnJetStreamTests.startUp(urls: test.urls, directory: directory.path,
                                                               data: directory.path + "/data", run: 1, extra: ["--security", file])
            try await UpOnJetStreamTests().awaitingStop(up) {
                let endpoint = "ipc://\(directory.path)/command.sock"
                func client(_ pair: CurveKeyPair?, timeout: Duration = .seconds(30)) throws -> BusClient {
                    try BusClient(options: BusClientOptions(endpoint: endpoint, requestTimeout: timeout, curve: try pair.map {
                        try CurveClientKeys(secretKey: $0.secretKey, serverKey: server.publicKey)
                    }))
                }
                let events = UpOnJetStreamTests.script(acks: 30)
                let publisher = try client(backend)
                defer { publisher.close() }
                _ = try await publisher.publish(events)
                let reader = try client(app)
                defer { reader.close() }
                let expected = try UpOnJetStreamTests.fold(events).ids
                #expect(try await UpOnJetStreamTests.outputIDs(reader, count: expected.count, consumer: "app.check") == expected)

                let stranger = try client(nil, timeout: .seconds(2))
                defer { stranger.close() }
                await #expect(throws: BusError.self) { _ = try await stranger.publish(GatewayTests.event("x")) }
            }
        }
    }
}
