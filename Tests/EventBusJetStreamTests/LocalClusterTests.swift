import EventBusJetStream
import Foundation
import NATS
import Testing

/// `cluster up`'s processes: three real nats-servers forming a JetStream cluster.
@Suite(.serialized) struct LocalClusterTests {
    @Test func threeNodesElectALeaderAndKeepAnR3Stream() throws {
        let test = try TestCluster(nodes: 3, syncAlways: true)
        for node in test.cluster.config.nodes {
            let text = try String(contentsOfFile: node.configPath, encoding: .utf8)
            #expect(text == node.configText)
        }
        let connection = try Connection(ConnectOptions(servers: test.urls, allowReconnect: false))
        defer { connection.close() }
        let js = try JetStream(connection: connection)
        let info = try js.addStream(StreamConfig(name: "R3", subjects: ["r3"], storage: .file, replicas: 3))
        #expect(info.config.replicas == 3)
        #expect(try js.publish("r3", [1], messageID: "one").sequence == 1)
        // Every node's log shows it running with JetStream in the cluster "eventbus".
        let log = try String(contentsOfFile: test.cluster.config.nodes[0].logPath, encoding: .utf8)
        #expect(log.contains("Cluster name is eventbus"))
        test.cluster.stop()
        #expect(test.cluster.processIdentifier(of: "n1") == nil)
    }

    @Test func aServerThatExitsIsNamed() throws {
        // A "server" that exits at once: the wait ends naming it rather than at its timeout.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-js-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ports = try FreePorts.take(2)
        let config = try ClusterConfig(dataDirectory: directory, clientPorts: [ports[0]], routePorts: [ports[1]])
        let cluster = try LocalCluster(config: config, binary: "/bin/false")
        defer { cluster.stop() }
        let error = #expect(throws: ClusterError.self) { try cluster.waitForLeader(timeout: .seconds(120)) }
        guard case .nodeExited(let node, let status, _)? = error else {
            Issue.record("expected nodeExited, got \(String(describing: error))")
            return
        }
        #expect(node == "n1")
        #expect(status != 0)
    }
}
