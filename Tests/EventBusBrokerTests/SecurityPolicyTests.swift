import EventBus
import Testing
@testable import EventBusBroker

/// The pure parts of the security rules: which endpoints count as local, and
/// which stages each role may publish, consume and see on the stream.
@Suite struct SecurityPolicyTests {
    @Test(arguments: [
        ("tcp://127.0.0.1:7750", true), ("tcp://127.1.2.3:*", true), ("tcp://localhost:7750", true),
        ("tcp://[::1]:7750", true), ("ipc:///tmp/bus.sock", true), ("inproc://bus", true),
        ("tcp://0.0.0.0:7750", false), ("tcp://*:7750", false), ("tcp://eth0:7750", false),
        ("tcp://192.168.1.5:7750", false), ("tcp://[::]:7750", false), ("tcp://127.0.0.1.example.com:1", false),
        ("tcp://127.0.0.1;192.168.1.5:1", false), ("tcp://1270.0.0.1:1", false), ("ws://127.0.0.1:1", false),
        ("pgm://eth0;239.192.1.1:5555", false),
    ])
    func localEndpoints(endpoint: String, local: Bool) {
        #expect(BindPolicy.isLocal(endpoint) == local)
    }

    /// Issue 15: docs/security.md lists tcp://localhost:PORT, which libzmq cannot bind (ENODEV).
    @Test func aLocalhostEndpointBinds() throws {
        #expect(BindPolicy.bindable("tcp://localhost:7750") == "tcp://127.0.0.1:7750")
        #expect(BindPolicy.bindable("tcp://127.0.0.2:7750") == "tcp://127.0.0.2:7750")
        let bus = try TestBroker { config in
            config.commandEndpoint = "tcp://localhost:*"
            config.streamEndpoint = "tcp://localhost:*"
        }
        defer { bus.stop() }
        #expect(try bus.peer().call("PING").isOK)
    }

    /// Issue 15, hole 1: a durable consumer's name belongs to a principal.
    @Test func consumerNamesBelongToTheirPrincipal() {
        let policy = AccessPolicy(pipeline: ["receipt-reducer", "read-privacy"])
        let reducer = Role.plugin("receipt-reducer")
        #expect(policy.mayName(consumer: "receipt-reducer", reducer, client: "plugin:receipt-reducer"))
        #expect(policy.mayName(consumer: "receipt-reducer.replay", reducer, client: "x"))
        #expect(!policy.mayName(consumer: "receipt-reducerx", reducer, client: "x"))
        #expect(!policy.mayName(consumer: "read-privacy", reducer, client: "x"))
        for role in [Role.subscriber, .backend] {
            #expect(policy.mayName(consumer: "dashboard", role, client: "dashboard"))
            #expect(policy.mayName(consumer: "dashboard.tail-1", role, client: "dashboard"))
            #expect(!policy.mayName(consumer: "dashboardx", role, client: "dashboard"))
            #expect(!policy.mayName(consumer: "receipt-reducer", role, client: "dashboard"))
            #expect(!policy.mayName(consumer: "dashboard", role, client: nil))
            // A client named like a plugin still cannot take the plugin's names.
            #expect(!policy.mayName(consumer: "read-privacy", role, client: "read-privacy"))
            #expect(!policy.mayName(consumer: "read-privacy.x", role, client: "read-privacy.x"))
        }
        #expect(policy.mayName(consumer: "receipt-reducer", .admin, client: "ops"))
        #expect(policy.namespaces([.subscriber], client: "dashboard") == "dashboard or dashboard.*")
        #expect(policy.namespaces([.subscriber, .admin], client: "ops") == "any name (admin)")
    }

    @Test func insecureBindNeedsKeysOrTheOption() throws {
        var config = BrokerConfig()
        #expect(throws: BrokerError.self) { try BindPolicy.check("tcp://0.0.0.0:1", option: "--command", config: config) }
        try BindPolicy.check("tcp://127.0.0.1:1", option: "--command", config: config)
        config.allowInsecureBind = true
        try BindPolicy.check("tcp://0.0.0.0:1", option: "--command", config: config)
    }

    @Test func rolesParseAndPrint() {
        for text in ["backend", "subscriber", "admin", "plugin:receipt-reducer"] {
            #expect(Role(text)?.description == text)
        }
        #expect(Role("plugin:") == nil)
        #expect(Role("root") == nil)
    }

    @Test func pluginStagesFollowThePipeline() {
        let policy = AccessPolicy(pipeline: ["a", "b", "c"])
        #expect(policy.consumeStages(.plugin("a")) == ["in"])
        #expect(policy.publishStages(.plugin("a")) == ["a", "diag"])
        #expect(policy.consumeStages(.plugin("b")) == ["a"])
        #expect(policy.publishStages(.plugin("b")) == ["b", "diag"])
        #expect(policy.consumeStages(.plugin("c")) == ["b"])
        #expect(policy.publishStages(.plugin("c")) == ["out", "diag"])
        #expect(policy.publishStages(.plugin("z")) == [])
        #expect(!policy.allows(.pub, .plugin("z")) && policy.allows(.hello, .plugin("z")))
        #expect(policy.publishStages(.admin) == nil && policy.consumeStages(.admin) == nil && policy.streamStages(.admin) == nil)
        #expect(policy.streamStages(.subscriber) == ["out", "diag"])
        #expect(policy.streamStages(.backend) == [] && policy.streamStages(.plugin("a")) == [])
    }
}
