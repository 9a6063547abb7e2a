import EventBus
import EventBusJetStream
import Foundation
import Logging
import NATS
import Testing

/// Users per role on the cluster `eventbus cluster up` writes: the configuration as a
/// value, then a real server refusing what a role may not write.
@Suite(.serialized) struct ClusterUsersTests {
    let users: ClusterUsers

    init() throws {
        users = try ClusterUsers(plugins: ["receipt-reducer", "read-privacy"])
    }

    @Test func eachServerGetsTheUsersAndOnlyGatewaysMayWriteToIn() throws {
        let config = try ClusterConfig(nodes: 3, dataDirectory: "/tmp/x", users: users)
        let text = config.nodes[0].configText
        #expect(text.contains("authorization {"))
        // Each user with its password's bcrypt hash; no password anywhere in the file.
        for role in users.roles {
            let hash = try #require(users.passwordHashes[role])
            #expect(hash.hasPrefix("$2b$\(PasswordHash.cost)$") && hash.count == 60)
            #expect(PasswordHash.verify(users.passwords[role]!, hash: hash))
            #expect(!PasswordHash.verify(users.passwords[role]! + "x", hash: hash))
            #expect(text.contains("user: \"\(role.user)\", password: \"\(hash)\""))
            #expect(!text.contains(users.passwords[role]!))
        }
        #expect(users.publishAllowed(.gateway).contains("eventbus.>"))
        for role in users.roles where role != .gateway && role != .admin {
            let allowed = users.publishAllowed(role)
            #expect(!allowed.contains { $0 == "eventbus.in" || $0 == "eventbus.>" || $0 == ">" || $0 == "$JS.API.>" })
            #expect(allowed.filter { $0.hasPrefix("eventbus.") } == ["eventbus.\(role.user.dropFirst("plugin-".count))"])
        }
        // The printed value carries the gateway's credentials; each user has its file.
        #expect(config.backendValue.hasPrefix("nats://gateway:\(users.passwords[.gateway]!)@127.0.0.1:4222,"))
        #expect(config.credentialFiles.map(\.path) == ["admin", "gateway", "plugin-receipt-reducer", "plugin-read-privacy"]
            .map { "/tmp/x/users/\($0).url" })
        // Without users: no block, and URLs without credentials, as before.
        let open = try ClusterConfig(nodes: 1, dataDirectory: "/tmp/x")
        #expect(!open.nodes[0].configText.contains("authorization"))
        #expect(open.backendValue == "nats://127.0.0.1:4222" && open.credentialFiles.isEmpty)
        #expect(users.passwords[.admin] != users.passwords[.gateway] && users.passwords[.admin]!.count == 32)
        #expect(throws: ClusterError.invalidPluginName("a.b")) { try ClusterUsers(plugins: ["a.b"]) }
    }

    /// A JetStream publish as `role`; whether JetStream stored it.
    func publish(_ test: TestCluster, as role: ClusterUsers.Role, to stage: String, id: String) throws -> Bool {
        let connection = try Connection(ConnectOptions(servers: test.urls(for: role), allowReconnect: false))
        defer { connection.close() }
        let jetStream = try JetStream(connection: connection, options: JetStreamOptions(requestTimeout: .seconds(1)))
        do {
            _ = try jetStream.publish("eventbus.\(stage)", GatewayTests.event(id), messageID: id)
            return true
        } catch {
            // A denied subject: the server drops the message (Permissions Violation), no ack.
            return false
        }
    }

    @Test func aPluginsUserWritesItsOwnStageAndStateOnlyAndTheGatewayServesPubs() async throws {
        let test = try TestCluster(nodes: 1, users: users)
        // The gateway, as the gateway user, makes the streams and serves PUB and CONSUME.
        let running = try RunningGateway(GatewayConfig(servers: test.urls, commandEndpoint: "tcp://127.0.0.1:*",
                                                       pipeline: ["receipt-reducer", "read-privacy"]))
        defer { running.stop() }
        let client = try BusClient(options: BusClientOptions(endpoint: running.gateway.commandEndpoint, requestTimeout: .seconds(30)))
        defer { client.close() }
        #expect(try await client.publish([GatewayTests.event("g1"), GatewayTests.event("g2")]) == [1, 2])
        let consumer = try await client.consume(name: "reader", start: .earliest, credit: 4, prefixes: ["in/"])
        var seen: [UInt64] = []
        for try await delivery in consumer {
            seen.append(delivery.seq)
            consumer.ack(delivery.seq)
            if seen.count == 2 { break }
        }
        #expect(seen == [1, 2])

        // The reducer's user: its own stage yes; `in` and another plugin's stage no.
        #expect(try publish(test, as: .plugin("receipt-reducer"), to: "receipt-reducer", id: "r1"))
        #expect(try publish(test, as: .plugin("receipt-reducer"), to: "in", id: "r2") == false)
        #expect(try publish(test, as: .plugin("receipt-reducer"), to: "read-privacy", id: "r3") == false)
        #expect(try publish(test, as: .plugin("read-privacy"), to: "read-privacy", id: "p1"))
        #expect(try publish(test, as: .gateway, to: "in", id: "g3"))
        let admin = try Connection(ConnectOptions(servers: test.urls(for: .admin), allowReconnect: false))
        defer { admin.close() }
        let jetStream = try JetStream(connection: admin)
        #expect(try jetStream.streamInfo(StageStream(stage: "in").name).messages == 3)
        #expect(try jetStream.streamInfo(StageStream(stage: "receipt-reducer").name).messages == 1)
        #expect(try jetStream.streamInfo(StageStream(stage: "read-privacy").name).messages == 1)

        // Its state and its lease work with its own user; another plugin's keys are refused.
        let reducerURLs = test.urls(for: .plugin("receipt-reducer"))
        let store = try KVPluginStore(servers: reducerURLs, plugin: "receipt-reducer")
        try store.save(snapshot: Array("state".utf8), seq: 7)
        #expect(try store.load()?.seq == 7)
        let lease = try PluginLease(servers: reducerURLs, plugin: "receipt-reducer", holder: "m1:/data", logger: PluginStateTests.logger)
        #expect(try lease.acquire(until: { false }))
        lease.release()
        let foreign = try KVPluginStore(servers: reducerURLs, plugin: "read-privacy")
        #expect(throws: (any Error).self) { try foreign.save(snapshot: Array("forged".utf8), seq: 1) }
        #expect(try KVPluginStore(servers: test.urls(for: .plugin("read-privacy")), plugin: "read-privacy").load() == nil)

        // The server says why: a publish violation for each refused subject.
        let log = (try? String(contentsOfFile: test.cluster.config.nodes[0].logPath, encoding: .utf8)) ?? ""
        let violations = log.split(separator: "\n").filter { $0.contains("Violation") }
        for subject in ["eventbus.in", "eventbus.read-privacy", "$KV.EVENTBUS_STATE.read-privacy."] {
            #expect(violations.contains { $0.contains("plugin-receipt-reducer") && $0.contains(subject) },
                    "no violation for \(subject) in: \(violations.joined(separator: " | ").suffix(800))")
        }

        // The server checked the hashes: each user connected with its password above.
        // No user, or a wrong password: no connection at all.
        #expect(throws: NATSError.self) { try Connection(ConnectOptions(servers: test.cluster.config.clientURLs, allowReconnect: false)) }
        let wrong = test.cluster.config.clientURLs.map { $0.replacingOccurrences(of: "nats://", with: "nats://gateway:wrong@") }
        #expect(throws: NATSError.self) { try Connection(ConnectOptions(servers: wrong, allowReconnect: false)) }
    }
}
