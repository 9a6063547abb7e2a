import EventBus
import EventBusTesting
import Foundation
import Testing
import ZeroMQ

/// A real broker with CURVE keys and a pipeline `a,b`, and keys made by the
/// real `eventbus keygen` for one client of each role plus a stranger.
final class SecureBus: @unchecked Sendable {
    static let names = ["broker", "backend", "plugin-a", "plugin-b", "subscriber", "admin", "stranger"]
    let keys: URL
    let pairs: [String: CurveKeyPair]
    let broker: BrokerProcess
    let context: Context

    init(command: String? = nil, stream: String? = nil) async throws {
        keys = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-keys-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        var pairs: [String: CurveKeyPair] = [:]
        for name in Self.names {
            let prefix = keys.appendingPathComponent(name).path
            let status = try await Self.run(["keygen", "--out", prefix])
            #expect(status.code == 0, "keygen failed: \(status.stderr)")
            pairs[name] = try CurveKeyPair(secretKey: try CurveKeyFile.read(prefix + ".secret", secret: true))
            #expect(try CurveKeyFile.read(prefix + ".pub", secret: false) == pairs[name]?.publicKey)
        }
        self.pairs = pairs
        let yaml = """
            # The broker's security file for the tests.
            secret_key_file: broker.secret
            clients:
              - name: backend
                public_key_file: backend.pub
                role: backend
              - name: plugin-a
                public_key_file: plugin-a.pub
                role: plugin:a
              - name: plugin-b
                public_key: "\(pairs["plugin-b"]!.publicKey)"
                roles: [plugin:b]
              - name: subscriber
                public_key_file: subscriber.pub
                role: subscriber
              - name: admin
                public_key_file: admin.pub
                role: admin
            """
        try yaml.write(to: keys.appendingPathComponent("security.yaml"), atomically: true, encoding: .utf8)
        context = try Context()
        broker = try BrokerProcess(
            arguments: ["--security", keys.appendingPathComponent("security.yaml").path, "--pipeline", "a,b",
                        "--request-timeout-ms", "300", "--log-level", "warning"],
            command: command, stream: stream,
            probeKeys: try CurveClientKeys(secretKey: pairs["admin"]!.secretKey, serverKey: pairs["broker"]!.publicKey))
        try await broker.start(context: context)
    }

    /// The broker is stopped by the test (`bus.broker.terminateAfter`), whose cleanup is awaited.
    deinit {
        try? FileManager.default.removeItem(at: keys)
    }

    func clientKeys(_ name: String) throws -> CurveClientKeys {
        try CurveClientKeys(secretKey: pairs[name]!.secretKey, serverKey: pairs["broker"]!.publicKey)
    }

    /// A DEALER on the command socket with `name`'s keys (`nil`: in the clear).
    func peer(_ name: String?) throws -> Socket {
        let socket = try Socket(context: context, type: .dealer)
        try socket.setLinger(0)
        try socket.setReceiveTimeout(3_000)
        if let name { try clientKeys(name).apply(to: socket) }
        try socket.connect(broker.commandEndpoint)
        return socket
    }

    /// Runs `eventbus ARGS` and waits for it.
    static func run(_ arguments: [String], timeout: Int = 30) async throws -> (code: Int32, stderr: String) {
        let result = try await RunningProcess.run(BuildFolder.eventbus, arguments, timeout: .seconds(timeout))
        return (result.status, result.standardError)
    }
}

/// What the verb got back: `OK`, an error code, or `none` when nothing came.
func outcome(_ socket: Socket, _ frames: [String], events: [[UInt8]] = []) throws -> String {
    try socket.send(frames.map { Array($0.utf8) } + events)
    while let reply = try socket.receive() {
        guard reply.count >= 3, reply[2] == Array(frames[2].utf8) else { continue }
        let verb = String(decoding: reply[1], as: UTF8.self)
        if verb == "ERR", reply.count >= 4 { return String(decoding: reply[3], as: UTF8.self) }
        return verb
    }
    return "none"
}

/// The consumer namespace of a test client: `plugin-a` holds the role plugin:a, so its names
/// are `a` and `a.…`; every other client's names start with its own name.
func own(_ client: String) -> String {
    client.hasPrefix("plugin-") ? String(client.dropFirst("plugin-".count)) : client
}

func securityEvent(_ id: String, marker: String = "x") -> [UInt8] {
    Array(#"{"specversion":"1.0","id":"\#(id)","source":"/security-test","type":"message.read","subject":"messaging:general","time":"2026-11-22T03:10:00.123Z","data":{"cid":"messaging:general","user_id":"bob","message_id":"\#(marker)"}}"#.utf8)
}

@Suite(.serialized) struct SecurityTests {
    /// One row per (client, verb): whether the broker refuses it with `forbidden`.
    struct Case: CustomStringConvertible {
        let client: String
        let frames: [String]
        let forbidden: Bool
        var description: String { "\(client) \(frames.dropFirst(3).joined(separator: " ")) \(frames[1])" }
    }

    static let verbs: [(name: String, frames: @Sendable (String) -> [String], allowed: Set<String>)] = [
        ("PING", { ["EB1", "PING", $0] }, ["backend", "plugin-a", "plugin-b", "subscriber", "admin"]),
        ("HELLO", { ["EB1", "HELLO", $0, #"{"name":"t"}"#] }, ["backend", "plugin-a", "plugin-b", "subscriber", "admin"]),
        ("HELLO services", { ["EB1", "HELLO", $0, #"{"name":"t","services":["svc"]}"#] }, ["plugin-a", "plugin-b", "admin"]),
        ("PUB in", { ["EB1", "PUB", $0, "in"] }, ["backend", "admin"]),
        ("PUB a", { ["EB1", "PUB", $0, "a"] }, ["plugin-a", "admin"]),
        ("PUB b", { ["EB1", "PUB", $0, "b"] }, ["admin"]),
        ("PUB out", { ["EB1", "PUB", $0, "out"] }, ["plugin-b", "admin"]),
        ("PUB diag", { ["EB1", "PUB", $0, "diag"] }, ["plugin-a", "plugin-b", "admin"]),
        ("PUBS in", { ["EB1", "PUBS", $0, "in"] }, ["backend", "admin"]),
        ("PUBS out", { ["EB1", "PUBS", $0, "out"] }, ["plugin-b", "admin"]),
        ("CONSUME in", { ["EB1", "CONSUME", $0, "\(own($0)).in", "latest", "10", "in/"] }, ["plugin-a", "admin"]),
        ("CONSUME a", { ["EB1", "CONSUME", $0, "\(own($0)).a", "latest", "10", "a/"] }, ["plugin-b", "admin"]),
        ("CONSUME out", { ["EB1", "CONSUME", $0, "\(own($0)).out", "latest", "10", "out/"] }, ["subscriber", "admin"]),
        ("CONSUME diag", { ["EB1", "CONSUME", $0, "\(own($0)).diag", "latest", "10", "diag/"] }, ["subscriber", "admin"]),
        ("CONSUME everything", { ["EB1", "CONSUME", $0, "\(own($0)).all", "latest", "10", ""] }, ["admin"]),
        ("ACK", { ["EB1", "ACK", $0, "\(own($0)).nobody", "1"] }, ["plugin-a", "plugin-b", "subscriber", "admin"]),
        ("CANCEL", { ["EB1", "CANCEL", $0, "\(own($0)).nobody"] }, ["plugin-a", "plugin-b", "subscriber", "admin"]),
        ("REQ", { ["EB1", "REQ", $0, "receipts", #"{"op":"x"}"#] }, ["backend", "admin"]),
        ("STATS", { ["EB1", "STATS", $0] }, ["admin"]),
    ]

    @Test func eachRoleCanDoExactlyItsActions() async throws {
        let bus = try await SecureBus()
        try await bus.broker.terminateAfter {
            var forbiddenSeen = 0
            for client in ["backend", "plugin-a", "plugin-b", "subscriber", "admin"] {
                let socket = try bus.peer(client)
                defer { socket.close() }
                for (index, verb) in Self.verbs.enumerated() {
                    let frames = verb.frames(client)
                    let event = securityEvent("\(client)-\(index)")
                    let events = frames[1] == "PUB" ? [event] : frames[1] == "PUBS" ? [PublishBatch.encode([event])] : []
                    let got = try outcome(socket, frames, events: events)
                    let expectForbidden = !verb.allowed.contains(client)
                    if expectForbidden {
                        forbiddenSeen += 1
                        #expect(got == "forbidden", "\(client) \(verb.name): expected forbidden, got \(got)")
                    } else {
                        // ACK and CANCEL of a consumer the peer does not have fail, but not as forbidden.
                        #expect(got != "forbidden" && got != "none", "\(client) \(verb.name): expected allowed, got \(got)")
                    }
                }
            }
            // The refusals are counted in STATS.
            let admin = try bus.peer("admin")
            defer { admin.close() }
            try admin.send(["EB1", "STATS", "s"].map { Array($0.utf8) })
            let stats = try #require(try admin.receive())
            let json = try JSONParser.parse(stats[3])
            #expect(json["forbidden"]?.doubleValue == Double(forbiddenSeen))
        }
    }

    @Test func aForbiddenReplyNamesWhatWasRefused() async throws {
        let bus = try await SecureBus()
        try await bus.broker.terminateAfter {
            let plugin = try bus.peer("plugin-a")
            defer { plugin.close() }
            try plugin.send(["EB1", "PUB", "p", "out"].map { Array($0.utf8) } + [securityEvent("x")])
            let reply = try #require(try plugin.receive())
            #expect(String(decoding: reply[3], as: UTF8.self) == "forbidden")
            let text = String(decoding: reply[4], as: UTF8.self)
            #expect(text.contains("PUB to stage out") && text.contains("plugin-a"), "\(text)")
            // A PUBS is refused on its role before its batch is read: a broken batch is still `forbidden`.
            try plugin.send(["EB1", "PUBS", "q", "out", "not a batch"].map { Array($0.utf8) })
            let batched = try #require(try plugin.receive())
            #expect(String(decoding: batched[3], as: UTF8.self) == "forbidden")
            #expect(String(decoding: batched[4], as: UTF8.self).contains("PUBS to stage out"))
        }
    }

    @Test func anUnauthenticatedPeerAndAnUnknownKeyGetNoAnswer() async throws {
        let bus = try await SecureBus()
        try await bus.broker.terminateAfter {
            for client in [nil, "stranger"] {
                let socket = try Socket(context: bus.context, type: .dealer)
                try socket.setLinger(0)
                if let client { try bus.clientKeys(client).apply(to: socket) }
                let monitor = try socket.monitor(events: [.handshakeFailed, .handshakeSucceeded])
                try monitor.setReceiveTimeout(20_000)
                defer {
                    socket.stopMonitor()
                    monitor.close()
                    socket.close()
                }
                try socket.connect(bus.broker.commandEndpoint)
                _ = try socket.send(["EB1", "PING", "p"].map { Array($0.utf8) }, dontWait: true)
                // Positive control: the broker refused the handshake (no wait for "nothing" that
                // a slow machine could pass); after that, no answer can be waiting.
                let event = try monitor.receiveEvent()
                guard case .handshakeFailed? = event else {
                    Issue.record("\(client ?? "clear-text peer"): the handshake did not fail: \(String(describing: event))")
                    continue
                }
                #expect(try socket.receive(dontWait: true) == nil, "\(client ?? "clear-text peer") got an answer")
            }
            // A listed key on the same broker does get one: the silence above is the refusal.
            let admin = try bus.peer("admin")
            defer { admin.close() }
            #expect(try outcome(admin, ["EB1", "PING", "p"]) == "OK")
        }
    }

    @Test func aPluginsConsumerCannotBeTakenOverByAnotherClient() async throws {
        let bus = try await SecureBus()
        try await bus.broker.terminateAfter {
            let plugin = try bus.peer("plugin-b")
            defer { plugin.close() }
            #expect(try outcome(plugin, ["EB1", "CONSUME", "1", "b.worker", "latest", "10", "a/"]) == "OK")
            let other = try bus.peer("plugin-a")
            defer { other.close() }
            #expect(try outcome(other, ["EB1", "CONSUME", "2", "b.worker", "latest", "10", "in/"]) == "forbidden")
        }
    }

    /// Issue 15, hole 1: a subscriber that names a plugin's consumer first does not get it,
    /// cannot ACK it forward or CANCEL it, and the plugin attaches it afterwards.
    @Test func aSubscriberCannotTakeAPluginsConsumerNameEvenFirst() async throws {
        let bus = try await SecureBus()
        try await bus.broker.terminateAfter {
            let publisher = try bus.peer("backend")
            defer { publisher.close() }
            for index in 0..<5 {
                #expect(try outcome(publisher, ["EB1", "PUB", "p\(index)", "in"], events: [securityEvent("race-\(index)")]) == "OK")
            }
            let attacker = try bus.peer("subscriber")
            defer { attacker.close() }
            // The plugin b consumes stage a; its names are b and b.…. The subscriber may read out/.
            for name in ["b", "b.shadow", "a", "a.x"] {
                let got = try outcome(attacker, ["EB1", "CONSUME", "c-\(name)", name, "latest", "10", "out/"])
                #expect(got == "forbidden", "the subscriber attached \(name): \(got)")
            }
            #expect(try outcome(attacker, ["EB1", "ACK", "k", "b", "5"]) == "forbidden")
            #expect(try outcome(attacker, ["EB1", "CANCEL", "x", "b"]) == "forbidden")
            // Its own namespace works.
            #expect(try outcome(attacker, ["EB1", "CONSUME", "own", "subscriber.app", "latest", "10", "out/"]) == "OK")
            // The plugin gets its name, from its last ACK (none: the start of the log).
            let plugin = try bus.peer("plugin-b")
            defer { plugin.close() }
            #expect(try outcome(plugin, ["EB1", "CONSUME", "1", "b", "resume", "10", "a/"]) == "OK")
            // STATS names the client holding each consumer.
            let admin = try bus.peer("admin")
            defer { admin.close() }
            try admin.send(["EB1", "STATS", "s"].map { Array($0.utf8) })
            let stats = try JSONParser.parse(try #require(try admin.receive())[3])
            guard case .array(let consumers)? = stats["consumers"] else { Issue.record("no consumers in STATS"); return }
            let holder = consumers.first { $0["name"]?.stringValue == "b" }
            #expect(holder?["client"]?.stringValue == "plugin-b")
            #expect(holder?["acked"]?.doubleValue == 0)
        }
    }

    /// Issue 15, hole 2: no role may publish at `in` under the bus's own sources.
    @Test func eachRoleIsRefusedASourceUnderEventbusAtIn() async throws {
        let bus = try await SecureBus()
        try await bus.broker.terminateAfter {
            let forged = Array(#"{"specversion":"1.0","id":"receipt-reducer:9:0","source":"/eventbus/receipt-reducer","type":"channel.created","subject":"messaging:x","data":{"cid":"messaging:x","members":["ann"]}}"#.utf8)
            for client in ["backend", "admin"] {
                let socket = try bus.peer(client)
                defer { socket.close() }
                try socket.send(["EB1", "PUB", "f", "in"].map { Array($0.utf8) } + [forged])
                let reply = try #require(try socket.receive())
                #expect(String(decoding: reply[3], as: UTF8.self) == "bad_event", "\(client)")
                #expect(String(decoding: reply[4], as: UTF8.self).contains("source"), "\(client)")
                #expect(try outcome(socket, ["EB1", "PUBS", "g", "in"], events: [PublishBatch.encode([forged])]) == "bad_event")
            }
            for client in ["plugin-a", "plugin-b", "subscriber"] {
                let socket = try bus.peer(client)
                defer { socket.close() }
                #expect(try outcome(socket, ["EB1", "PUB", "f", "in"], events: [forged]) == "forbidden", "\(client)")
            }
        }
    }

    @Test func theStreamShowsASubscriberOnlyOutAndDiagAndOthersNothing() async throws {
        let bus = try await SecureBus()
        try await bus.broker.terminateAfter {
            func subscriber(_ name: String, _ prefix: String) throws -> Socket {
                let sub = try Socket(context: bus.context, type: .sub)
                try sub.setLinger(0)
                try sub.setReceiveTimeout(300)
                try bus.clientKeys(name).apply(to: sub)
                try sub.subscribe(Array(prefix.utf8))
                try sub.connect(bus.broker.streamEndpoint)
                return sub
            }
            let everything = try subscriber("subscriber", "")      // narrowed to out/ and diag/
            let preFilter = try subscriber("subscriber", "in/")    // refused at the XPUB
            let backend = try subscriber("backend", "")            // no stream rights at all
            let admin = try subscriber("admin", "")
            defer { for socket in [everything, preFilter, backend, admin] { socket.close() } }
            let publisher = try bus.peer("admin")
            defer { publisher.close() }
            // Publish to out and diag until the subscriptions are in place.
            var got: [String: Set<String>] = [:]
            for round in 0..<30 where got["everything", default: []].count < 2 || got["admin", default: []].count < 2 {
                for stage in ["in", "a", "out", "diag"] {
                    #expect(try outcome(publisher, ["EB1", "PUB", "p\(round)\(stage)", stage], events: [securityEvent("\(round)-\(stage)")]) == "OK")
                }
                for (name, socket) in [("everything", everything), ("preFilter", preFilter), ("backend", backend), ("admin", admin)] {
                    while let frames = try socket.receive() {
                        got[name, default: []].insert(String(String(decoding: frames[0], as: UTF8.self).prefix { $0 != "/" }))
                    }
                }
            }
            #expect(got["everything"] == ["out", "diag"])
            #expect(got["admin"] == ["out", "diag"])
            #expect(got["preFilter"] == nil)
            #expect(got["backend"] == nil)
            // The refused subscriptions are counted: "in/" of the subscriber, "" of the backend.
            try publisher.send(["EB1", "STATS", "s"].map { Array($0.utf8) })
            let stats = try #require(try publisher.receive())
            #expect(try JSONParser.parse(stats[3])["forbidden"]?.doubleValue == 2)
        }
    }

    @Test func keygenWritesAPrivateSecretAndAPublicKey() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-keygen-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let prefix = directory.appendingPathComponent("k").path
        #expect(try await SecureBus.run(["keygen", "--out", prefix]).code == 0)
        let secretMode = try FileManager.default.attributesOfItem(atPath: prefix + ".secret")[.posixPermissions] as? Int
        let publicMode = try FileManager.default.attributesOfItem(atPath: prefix + ".pub")[.posixPermissions] as? Int
        #expect(secretMode == 0o600)
        #expect(publicMode == 0o644)
        let pair = try CurveKeyPair(secretKey: try CurveKeyFile.read(prefix + ".secret", secret: true))
        #expect(try CurveKeyFile.read(prefix + ".pub", secret: false) == pair.publicKey)
        // It does not overwrite a key by accident.
        let again = try await SecureBus.run(["keygen", "--out", prefix])
        #expect(again.code != 0 && again.stderr.contains("--force"))
    }

    @Test func withoutKeysTheBrokerRefusesANonLoopbackBind() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-bind-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        for endpoint in ["tcp://0.0.0.0:0", "tcp://*:0"] {
            let result = try await SecureBus.run(["broker", "--data-dir", directory.path, "--command", endpoint,
                                            "--stream", "ipc://\(directory.path)-stream.sock"], timeout: 20)
            #expect(result.code != 0)
            #expect(result.stderr.contains("--allow-insecure-bind") && result.stderr.contains(endpoint), "\(result.stderr)")
        }
    }

    @Test func aBadSecurityFileStopsTheBrokerNamingWhatIsWrong() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-badsec-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func start(_ security: String) async throws -> (code: Int32, stderr: String) {
            try await SecureBus.run(["broker", "--data-dir", directory.path + "/data", "--security", security,
                               "--command", "ipc://\(directory.path)/c.sock", "--stream", "ipc://\(directory.path)/s.sock"], timeout: 20)
        }
        let missing = try await start(directory.path + "/nowhere.yaml")
        #expect(missing.code != 0 && missing.stderr.contains("nowhere.yaml"), "\(missing.stderr)")

        #expect(try await SecureBus.run(["keygen", "--out", directory.path + "/broker"]).code == 0)
        chmod(directory.path + "/broker.secret", 0o644)
        let file = directory.appendingPathComponent("security.yaml")
        try "secret_key_file: broker.secret\n".write(to: file, atomically: true, encoding: .utf8)
        let readable = try await start(file.path)
        #expect(readable.code != 0 && readable.stderr.contains("chmod 600"), "\(readable.stderr)")

        chmod(directory.path + "/broker.secret", 0o600)
        try "secret_key_file: broker.secret\nclients:\n  - name: x\n    public_key: \"short\"\n    role: wizard\n"
            .write(to: file, atomically: true, encoding: .utf8)
        let badRole = try await start(file.path)
        #expect(badRole.code != 0 && badRole.stderr.contains("unknown role \"wizard\""), "\(badRole.stderr)")
    }

    @Test func ipcSocketFilesArePrivateToTheBrokersUser() async throws {
        let context = try Context()
        let broker = try BrokerProcess(arguments: ["--log-level", "warning"])
        try await broker.start(context: context)
        try await broker.terminateAfter {
            for endpoint in [broker.commandEndpoint, broker.streamEndpoint] {
                var status = stat()
                #expect(stat(String(endpoint.dropFirst("ipc://".count)), &status) == 0)
                #expect(status.st_mode & 0o777 == 0o600, "\(endpoint) has mode \(String(status.st_mode & 0o777, radix: 8))")
            }
        }
    }
}
