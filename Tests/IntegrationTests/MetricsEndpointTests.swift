import EventBus
import EventBusTesting
import Foundation
import Testing
import ZeroMQ

/// `--metrics`: Prometheus text over HTTP whose counters match STATS after a known workload.
@Suite(.serialized) struct MetricsEndpointTests {
    static func event(_ id: String, user: String = "bob") -> [UInt8] {
        Array(#"{"specversion":"1.0","id":"\#(id)","source":"/metrics-test","type":"message.read","subject":"messaging:general","time":"2026-11-22T03:10:00.123Z","data":{"cid":"messaging:general","user_id":"\#(user)","message_id":"m1"}}"#.utf8)
    }

    /// `curl -fsS URL`, as an operator would scrape it.
    static func curl(_ url: String) async throws -> String {
        let result = try await RunningProcess.run("/usr/bin/curl", ["-fsS", "--max-time", "10", url])
        guard result.status == 0 else { throw ProcessError("curl \(url) exited \(result.status)") }
        return result.standardOutput
    }

    /// Parses the text exposition format, checking every line's grammar, into
    /// `name{labels}` → value; each sample's family must have a `# TYPE` line.
    static func samples(_ text: String) throws -> [String: Double] {
        var types: Set<String> = []
        var samples: [String: Double] = [:]
        let sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*"(,[a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*")*\})? (-?[0-9.e+-]+|\+Inf|NaN)$/
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3]) else {
                    throw ProcessError("bad TYPE line: \(line)")
                }
                types.insert(String(parts[2]))
                continue
            }
            if line.hasPrefix("#") { continue }
            guard let match = try sample.wholeMatch(in: String(line)), let value = Double(match.output.4) else {
                throw ProcessError("not a Prometheus sample line: \(line)")
            }
            let name = String(match.output.1)
            let family = ["_bucket", "_sum", "_count"].reduce(name) { name, suffix in
                name.hasSuffix(suffix) && types.contains(String(name.dropLast(suffix.count))) ? String(name.dropLast(suffix.count)) : name
            }
            guard types.contains(family) else { throw ProcessError("\(name) has no # TYPE line") }
            samples[name + (match.output.2.map(String.init) ?? "")] = value
        }
        return samples
    }

    @Test func brokerCountersMatchStatsAfterAKnownWorkload() async throws {
        let context = try Context()
        let broker = try BrokerProcess(arguments: ["--metrics", "127.0.0.1:0", "--request-timeout-ms", "300"])
        try await broker.start(context: context)
        try await broker.terminateAfter {
            let address = try #require(broker.log.firstMatch(of: /metrics\.address=(127\.0\.0\.1:[0-9]+)/)?.output.1)
            let peer = try Socket(context: context, type: .dealer)
            defer { peer.close() }
            try peer.setLinger(0)
            try peer.setReceiveTimeout(10_000)
            try peer.connect(broker.commandEndpoint)
            var delivered = 0
            func call(_ verb: String, _ arguments: [[UInt8]]) throws -> [[UInt8]] {
                try peer.send([Array("EB1".utf8), Array(verb.utf8), Array("c".utf8)] + arguments)
                while true {
                    let frames = try #require(try peer.receive())
                    guard frames[1] == Array("EVT".utf8) else { return frames }
                    delivered += 1
                }
            }

            // 8 events to in, 3 of them again (dedup), one invalid event, one unknown stage, one unanswered REQ.
            #expect(try call("PUB", [Array("in".utf8)] + (0..<5).map { Self.event("a\($0)") })[1] == Array("OK".utf8))
            #expect(try call("PUB", [Array("in".utf8)] + (0..<3).map { Self.event("b\($0)") })[1] == Array("OK".utf8))
            #expect(try call("PUB", [Array("in".utf8)] + (0..<3).map { Self.event("b\($0)") })[1] == Array("OK".utf8))
            #expect(try call("PUB", [Array("in".utf8), Array(#"{"specversion":"1.0"}"#.utf8)])[3] == Array("bad_event".utf8))
            #expect(try call("PUB", [Array("nowhere".utf8), Self.event("c0")])[3] == Array("unknown_stage".utf8))
            #expect(try call("REQ", [Array("receipts".utf8), Array(#"{"method":"unread_counts","params":{"user_id":"bob"}}"#.utf8)])[3]
                == Array("timeout".utf8))
            // A consumer of in with credit 4 that acks SEQ 2: 6 delivered, lag 7 (the query event is on in too).
            _ = try call("CONSUME", [Array("metrics-test".utf8), Array("earliest".utf8), Array("4".utf8), Array("in/".utf8)])
            while delivered < 4, let frames = try peer.receive() {
                if frames[1] == Array("EVT".utf8) { delivered += 1 }
            }
            // A successful ACK has no reply.
            try peer.send([Array("EB1".utf8), Array("ACK".utf8), [], Array("metrics-test".utf8), Array("2".utf8)])
            while delivered < 6, let frames = try peer.receive() {
                if frames[1] == Array("EVT".utf8) { delivered += 1 }
            }
            // Gauges are refreshed every second: poll until the consumer's lag gauge shows this state.
            let lagKey = #"eventbus_consumer_lag{consumer="metrics-test"}"#
            var metrics = try Self.samples(try await Self.curl("http://\(address)/metrics"))
            let deadline = ContinuousClock.now + .seconds(10)
            while metrics[lagKey] != 7 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))  // a poll interval
                metrics = try Self.samples(try await Self.curl("http://\(address)/metrics"))
            }
            let stats = try JSONParser.parse(try call("STATS", []).last ?? [])
            func number(_ value: JSONValue?) -> Double { value?.doubleValue ?? -1 }

            #expect(metrics[#"eventbus_events_appended_total{stage="in"}"#] == number(stats["stages"]?["in"]))
            #expect(metrics[#"eventbus_events_appended_total{stage="in"}"#] == 9)
            #expect(metrics["eventbus_dedup_hits_total"] == number(stats["dedup_hits"]))
            #expect(metrics["eventbus_dedup_hits_total"] == 3)
            for code in ["bad_event", "unknown_stage", "timeout"] {
                #expect(metrics[#"eventbus_rejected_total{code="\#(code)"}"#] == number(stats["rejected"]?[code]), "\(code)")
                #expect(metrics[#"eventbus_rejected_total{code="\#(code)"}"#] == 1, "\(code)")
            }
            #expect(metrics[#"eventbus_requests_total{service="receipts",outcome="timeout"}"#] == 1)
            #expect(metrics[#"eventbus_events_delivered_total{consumer="metrics-test"}"#] == Double(delivered))
            #expect(delivered == 6)
            guard case .array(let consumers)? = stats["consumers"] else { Issue.record("STATS has no consumers"); return }
            let consumer = consumers.first { $0["name"]?.stringValue == "metrics-test" }
            #expect(metrics[#"eventbus_consumer_lag{consumer="metrics-test"}"#] == number(consumer?["lag"]))
            #expect(metrics[#"eventbus_consumer_lag{consumer="metrics-test"}"#] == 7)
            #expect(metrics["eventbus_log_head_seq"] == number(stats["head_seq"]))
            #expect((metrics["eventbus_fsync_duration_seconds_count"] ?? 0) >= 3, "one fsync per commit with --fsync always")
        }
    }

    @Test func aNonLoopbackMetricsAddressIsRefusedNamingTheOption() async throws {
        let result = try await RunningProcess.run(BuildFolder.eventbus, ["broker", "--metrics", "0.0.0.0:9464", "--data-dir", "/nonexistent"])
        let text = result.standardError
        #expect(result.status != 0)
        #expect(text.contains("--metrics") && text.contains("loopback"), "\(text)")
    }

    @Test func privacyFilterCountsSuppressionsByReasonAsTheDiagStageDoes() async throws {
        // A free loopback port: the plugin's address is given before it starts.
        let port = try EphemeralEndpoint.freePort()
        let pipeline = try SupervisedPipeline([
            SupervisedPipeline.plugin("read-privacy", executable: "read-privacy", ["--metrics", "127.0.0.1:\(port)"]),
        ])
        try await pipeline.stopAfter {
            try await pipeline.waitUntilReady()
            let socket = try pipeline.peer()
            defer { socket.close() }
            let off = Array(#"{"specversion":"1.0","id":"u1","source":"/metrics-test","type":"user.updated","subject":"@bob","time":"2026-11-22T03:10:00.123Z","data":{"user":{"id":"bob","privacy_settings":{"read_receipts":{"enabled":false}}}}}"#.utf8)
            _ = try pipeline.call(socket, "PUB", [Array("in".utf8), off, Self.event("r1"), Self.event("r2"), Self.event("r3", user: "cat")])
            _ = try pipeline.readIDs("out/messaging:general/", count: 1, consumer: "metrics-reader")

            var metrics: [String: Double] = [:]
            let key = #"eventbus_privacy_suppressed_total{policy="read-privacy",reason="user_setting"}"#
            let inKey = #"eventbus_plugin_events_in_total{plugin="read-privacy"}"#
            let deadline = ContinuousClock.now + .seconds(20)
            // The suppression counts as it is decided, the batch counters once the batch's output
            // is confirmed: wait for both, not for the first alone.
            while (metrics[key] != 2 || metrics[inKey] != 4) && ContinuousClock.now < deadline {
                metrics = (try? Self.samples(try await Self.curl("http://127.0.0.1:\(port)/metrics"))) ?? [:]
                try await Task.sleep(for: .milliseconds(100))  // a poll interval
            }
            #expect(metrics[key] == 2)
            let audited = try pipeline.stats()["diag"]?["receipt.suppressed"]?.doubleValue
            #expect(metrics[key] == audited)
            #expect(metrics[#"eventbus_plugin_events_in_total{plugin="read-privacy"}"#] == 4)
            #expect(metrics[#"eventbus_plugin_events_out_total{plugin="read-privacy",stage="diag"}"#] == 2)
        }
    }

    /// docs/operations.md's metrics configuration, run as written under `eventbus up`:
    /// the broker and each plugin serve their own endpoint.
    @Test func theDocumentedUpConfigurationServesTheBrokerAndEachPlugin() async throws {
        let sample = try #require(try MarkdownBlocks.blocks("yaml", in: "docs/operations.md").first { $0.contains("--metrics") })
        let ports = sample.matches(of: /127\.0\.0\.1:([0-9]+)/).map { String($0.output.1) }
        #expect(ports.count == 2)
        try await TemporaryDirectory.with("eventbus-metrics") { directory in
            let config = directory.appendingPathComponent("eventbus.yaml")
            try sample.write(to: config, atomically: true, encoding: .utf8)
            let stderr = directory.appendingPathComponent("up.stderr")

            let process = try RunningProcess(
                BuildFolder.eventbus,
                ["up", "--config", config.path, "--data-dir", directory.appendingPathComponent("data").path,
                 "--command", EphemeralEndpoint.ipc(in: directory, "command"), "--stream", EphemeralEndpoint.ipc(in: directory, "stream"),
                 "--metrics", "127.0.0.1:0"],
                standardError: .file(stderr.path))
            func log() -> String { (try? String(contentsOf: stderr, encoding: .utf8)) ?? "" }
            var broker: Substring?
            var plugins: [String: Bool] = [:]
            do {
                let deadline = ContinuousClock.now + .seconds(30)
                while ContinuousClock.now < deadline && (broker == nil || plugins.count < 2) {
                    broker = log().firstMatch(of: /metrics\.address=(127\.0\.0\.1:[0-9]+)/)?.output.1
                    for port in ports where plugins[port] == nil {
                        if let text = try? await Self.curl("http://127.0.0.1:\(port)/metrics"), text.contains("eventbus_plugin_applied_seq") {
                            plugins[port] = true
                        }
                    }
                    try await Task.sleep(for: .milliseconds(200))  // a poll interval
                }
                #expect(plugins.count == 2, "plugin endpoints \(ports) did not serve: \(log())")
                let address = try #require(broker, "the broker did not log its metrics address: \(log())")
                let samples = try Self.samples(try await Self.curl("http://\(address)/metrics"))
                #expect(samples["eventbus_log_head_seq"] != nil)
            } catch {
                _ = try? await process.terminate()
                throw error
            }
            try await process.terminate()
        }
    }
}
