import EventBus
import EventBusJetStream
import EventBusTesting
import Foundation
import Logging
import NATS
import Testing

/// A cluster that speaks TLS to its clients and between its servers (`cluster up
/// --tls-cert/--tls-key`), reached by the gateway and the plugins with `--backend-ca`:
/// what a deployment across machines needs (docs/scale-out.md).
@Suite(.serialized) struct TLSClusterTests {
    @Test func theServersRequireTLSOfClientsAndOfEachOther() {
        let tls = ClusterTLS(certificate: "/c/server.pem", key: "/c/server-key.pem")
        let nodes = (try? ClusterConfig(dataDirectory: "/d", clientPorts: [1, 2, 3], routePorts: [4, 5, 6], tls: tls).nodes) ?? []
        let text = nodes.first?.configText ?? ""
        let block = ["tls {", "  cert_file: \"/c/server.pem\"", "  key_file: \"/c/server-key.pem\"",
                     "  ca_file: \"/c/server.pem\"", "  timeout: 5", "}"]
        // Once for clients, once inside `cluster` for the routes.
        #expect(text.contains(block.joined(separator: "\n")))
        #expect(text.contains(block.map { "  " + $0 }.joined(separator: "\n")))
        let plain = (try? ClusterConfig(dataDirectory: "/d", clientPorts: [1], routePorts: [2]).nodes.first?.configText) ?? ""
        #expect(!plain.contains("tls {"))
    }

    @Test func aGatewayWithTheAuthorityServesTheBusAndOneWithoutIsRefused() async throws {
        let directory = try TemporaryDirectory.create("eventbus-js-tls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try await TestCertificate.make(in: directory)
        let test = try TestCluster(nodes: 3, tls: ClusterTLS(certificate: certificate.certificate, key: certificate.key))
        var config = GatewayConfig(servers: test.urls, commandEndpoint: "tcp://127.0.0.1:*")
        config.trustedCertificates = certificate.certificate
        let running = try RunningGateway(config)
        defer { running.stop() }
        let client = try BusClient(options: BusClientOptions(endpoint: running.gateway.commandEndpoint, requestTimeout: .seconds(30)))
        defer { client.close() }
        #expect(try await client.publish((1...5).map { GatewayTests.event("t\($0)") }) == [1, 2, 3, 4, 5])
        let consumer = try await client.consume(name: "over-tls", start: .earliest, credit: 10, prefixes: ["in/"])
        var seqs: [UInt64] = []
        for try await delivery in consumer {
            seqs.append(delivery.seq)
            consumer.ack(delivery.seq)
            if seqs.count == 5 { break }
        }
        #expect(seqs == [1, 2, 3, 4, 5])

        // Without the authority, the servers cannot be checked: the gateway does not start.
        let refused = #expect(throws: GatewayError.self) {
            try Gateway(config: GatewayConfig(servers: test.urls, commandEndpoint: "tcp://127.0.0.1:*"), logger: Logger(label: "test"))
        }
        #expect(refused?.description.contains(test.urls[0]) == true, "\(String(describing: refused))")
        #expect(refused?.description.contains("--backend-ca") == true, "\(String(describing: refused))")
    }

    /// `eventbus up --backend … --backend-ca FILE`: the gateway inside it and the reducer's
    /// lease and state (EVENTBUS_STATE_CA) go over TLS; the outputs are the pure fold's.
    @Test func theReducerRunsOnATLSClusterWithBackendCA() async throws {
        try await withDeadline(.seconds(300)) {
            let directory = try TemporaryDirectory.create("eventbus-js-tls-up")
            defer { try? FileManager.default.removeItem(at: directory) }
            let certificate = try await TestCertificate.make(in: directory)
            let test = try TestCluster(nodes: 1, tls: ClusterTLS(certificate: certificate.certificate, key: certificate.key))
            let (up, _) = try await UpOnJetStreamTests.startUp(urls: test.urls, directory: directory.path,
                                                               data: directory.path + "/data", run: 1,
                                                               extra: ["--backend-ca", certificate.certificate])
            try await UpOnJetStreamTests().awaitingStop(up) {
                let pid = try #require(UpOnJetStreamTests.child(named: "receipt-reducer", of: up.processIdentifier))
                let environ = try #require(FileManager.default.contents(atPath: "/proc/\(pid)/environ"))
                let variables = environ.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
                #expect(variables.contains("EVENTBUS_STATE_CA=\(certificate.certificate)"))

                let events = UpOnJetStreamTests.script(acks: 40)
                let client = try BusClient(options: BusClientOptions(endpoint: "ipc://\(directory.path)/command.sock",
                                                                     requestTimeout: .seconds(30)))
                defer { client.close() }
                _ = try await client.publish(events)
                let expected = try UpOnJetStreamTests.fold(events).ids
                #expect(try await UpOnJetStreamTests.outputIDs(client, count: expected.count, consumer: "check-tls") == expected)
            }
        }
    }
}
