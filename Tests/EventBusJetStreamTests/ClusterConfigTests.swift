import EventBusJetStream
import Testing

/// `eventbus cluster up`'s configuration as values: no process.
@Suite struct ClusterConfigTests {
    @Test func threeNodesFromABasePort() throws {
        let config = try ClusterConfig(nodes: 3, dataDirectory: "/data/bus", basePort: 4222)
        #expect(config.clientPorts == [4222, 4223, 4224])
        #expect(config.routePorts == [6222, 6223, 6224])
        #expect(config.backendValue == "nats://127.0.0.1:4222,nats://127.0.0.1:4223,nats://127.0.0.1:4224")
        #expect(config.nodes.map(\.name) == ["n1", "n2", "n3"])
        #expect(config.nodes.map(\.directory) == ["/data/bus/n1", "/data/bus/n2", "/data/bus/n3"])
        #expect(config.nodes[1].configText == """
            # Written by eventbus cluster up: node n2 of 3.
            server_name: n2
            listen: 127.0.0.1:4223
            log_file: "/data/bus/n2/server.log"
            jetstream {
              store_dir: "/data/bus/n2/store"
            }
            cluster {
              name: eventbus
              listen: 127.0.0.1:6223
              routes: [
                nats-route://127.0.0.1:6222
                nats-route://127.0.0.1:6223
                nats-route://127.0.0.1:6224
              ]
            }

            """)
    }

    @Test func syncAlwaysIsInTheJetStreamBlockOnlyWhenAsked() throws {
        let always = try ClusterConfig(nodes: 3, dataDirectory: "/d", syncAlways: true)
        #expect(always.nodes.allSatisfy { $0.configText.contains("jetstream {\n  store_dir: \"\($0.storeDirectory)\"\n  sync_interval: always\n}") })
        let relaxed = try ClusterConfig(nodes: 3, dataDirectory: "/d")
        #expect(relaxed.nodes.allSatisfy { !$0.configText.contains("sync_interval") })
    }

    @Test func oneNodeHasNoClusterBlock() throws {
        let config = try ClusterConfig(nodes: 1, dataDirectory: "/d/", basePort: 5000)
        let node = try #require(config.nodes.first)
        #expect(node.routePort == nil)
        #expect(node.directory == "/d/n1")
        #expect(!node.configText.contains("cluster {"))
        #expect(config.clientURLs == ["nats://127.0.0.1:5000"])
    }

    @Test func explicitPortsAreKeptInNodeOrder() throws {
        let config = try ClusterConfig(dataDirectory: "/d", clientPorts: [31001, 31005, 31003], routePorts: [32001, 32002, 32003])
        #expect(config.nodes.map(\.clientPort) == [31001, 31005, 31003])
        #expect(config.nodes.map(\.routePort) == [32001, 32002, 32003])
        #expect(config.nodes[0].routes == ["nats-route://127.0.0.1:32001", "nats-route://127.0.0.1:32002", "nats-route://127.0.0.1:32003"])
    }

    @Test func badCountsAndPortsAreRefused() {
        #expect(throws: ClusterError.invalidNodeCount(0)) { try ClusterConfig(nodes: 0, dataDirectory: "/d") }
        #expect(throws: ClusterError.invalidNodeCount(16)) { try ClusterConfig(nodes: 16, dataDirectory: "/d") }
        #expect(throws: ClusterError.invalidPort(65_536)) { try ClusterConfig(nodes: 2, dataDirectory: "/d", basePort: 65_535) }
        #expect(throws: ClusterError.invalidPort(7000)) {
            try ClusterConfig(dataDirectory: "/d", clientPorts: [7000, 7001], routePorts: [7000, 7002])
        }
        #expect(throws: ClusterError.invalidNodeCount(2)) {
            try ClusterConfig(dataDirectory: "/d", clientPorts: [7000, 7001], routePorts: [7002])
        }
    }

    @Test func quotedPathsEscapeQuotesAndBackslashes() throws {
        let config = try ClusterConfig(nodes: 1, dataDirectory: #"/tmp/a "b"\c"#)
        #expect(config.nodes[0].configText.contains(#"store_dir: "/tmp/a \"b\"\\c/n1/store""#))
    }

    @Test func theBinaryComesFromTheVariableFirst() throws {
        #expect(throws: ClusterError.self) {
            try ServerBinary.find(environment: [ServerBinary.environmentVariable: "/nonexistent/nats-server"])
        }
        #expect(throws: ClusterError.self) { try ServerBinary.find(environment: ["PATH": "/nonexistent"]) }
        #expect(try ServerBinary.find(environment: [ServerBinary.environmentVariable: "/bin/sh"]) == "/bin/sh")
    }
}
