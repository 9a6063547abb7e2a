import EventBus
import EventBusJetStream
import EventBusTesting
import Foundation
import Logging
import ReceiptReducer
import Testing

/// `eventbus up --backend nats://…`: the supervisor with a JetStream gateway as its
/// front and the real `receipt-reducer` process against it, checked against the pure
/// fold, across a SIGKILL of the reducer: its outputs and a query's answer.
@Suite(.serialized) struct UpOnJetStreamTests {
    static let cid = "messaging:team"
    static let members = (0..<10).map { "u\($0)" }

    static func envelope(_ id: String, _ type: String, _ data: String, minute: Int = 0) -> [UInt8] {
        let time = String(format: "2026-11-22T03:%02d:%02d.000Z", minute / 60 % 60, minute % 60)
        return Array(#"{"specversion":"1.0","id":"\#(id)","source":"/chat-api","type":"\#(type)","subject":"\#(cid)","time":"\#(time)","data":\#(data)}"#.utf8)
    }

    /// A group chat: the channel, 30 messages, then `acks` seeded reads and deliveries,
    /// mostly of newer and newer messages (so that most move a watermark), some racing.
    static func script(acks: Int) -> [[UInt8]] {
        var events = [envelope("c", "channel.created", #"{"cid":"\#(cid)","members":[\#(members.map { "\"\($0)\"" }.joined(separator: ","))]}"#)]
        for n in 0..<30 {
            events.append(envelope("m\(n)", "message.new",
                                   #"{"cid":"\#(cid)","message":{"id":"m\#(n)","user_id":"\#(members[n % 10])","created_at":"2026-11-22T03:00:00.000Z"}}"#, minute: n))
        }
        var random = SplitMix64(seed: 7)
        for n in 0..<acks {
            let user = members[random.below(10)], message = "m\(min(29, n * 30 / acks + random.below(4)))"
            let type = random.below(3) == 0 ? "message.delivered" : "message.read"
            events.append(envelope("a\(n)", type, #"{"cid":"\#(cid)","user_id":"\#(user)","message_id":"\#(message)"}"#, minute: n % 3600))
        }
        return events
    }

    /// The ids of `out` that the pure fold writes for `events` logged at `in` SEQ 1, 2, …,
    /// and the fold after them.
    static func fold(_ events: [[UInt8]]) throws -> (ids: [String], reducer: ReceiptReducer) {
        var reducer = ReceiptReducer()
        var ids: [String] = []
        for (index, event) in events.enumerated() {
            let seq = UInt64(index + 1)
            let validated = try EventValidator.validate(event, stage: "in")
            let payload = try #require(validated.payload)
            for (n, output) in reducer.apply(ReducerInput(seq: seq, time: validated.envelope.time, payload: payload,
                                                          data: validated.envelope.data)).enumerated() where output.stage == "out" {
                ids.append("receipt-reducer:\(seq):\(n)")
            }
        }
        return (ids, reducer)
    }

    /// The running plugin `name` whose parent is `parent`, from /proc.
    static func child(named name: String, of parent: Int32) -> Int32? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        for entry in entries {
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { continue }
            let comm = stat[stat.index(after: open)..<close]
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if comm == name.prefix(15), fields.count > 1, Int32(fields[1]) == parent { return pid }
        }
        return nil
    }

    /// Bounded: a missing output would otherwise leave the consumer waiting for ever.
    @Test func theReducerOnJetStreamWritesWhatThePureFoldWritesAcrossASIGKILL() async throws {
        try await withDeadline(.seconds(600)) {
            let test = try TestCluster(nodes: 1)
            let directory = try test.scratchDirectory("up")
            let endpoint = "ipc://\(directory)/command.sock"
            let (up, _) = try await Self.startUp(urls: test.urls, directory: directory, data: directory + "/data", run: 1)
            try await awaitingStop(up) {
                let events = Self.script(acks: 600)
                let client = try BusClient(options: BusClientOptions(endpoint: endpoint, requestTimeout: .seconds(30)))
                defer { client.close() }
                var killed = false
                for start in stride(from: 0, to: events.count, by: 40) {
                    let seqs = try await client.publish(Array(events[start..<min(events.count, start + 40)]))
                    #expect(seqs == (start..<min(events.count, start + 40)).map { UInt64($0 + 1) })
                    if start == 320, let pid = Self.child(named: "receipt-reducer", of: up.processIdentifier) {
                        kill(pid, SIGKILL)
                        killed = true
                    }
                }
                #expect(killed, "the reducer's process was not found to kill")

                let (expected, reducer) = try Self.fold(events)
                #expect(expected.count > 80)
                // `out` also holds the channel.created the reducer passes on (its first event).
                let consumer = try await client.consume(name: "check-out", start: .earliest, credit: 1_000, prefixes: ["out/"])
                var ids: [String] = []
                for try await delivery in consumer {
                    let id = try EventValidator.scanEnvelope(delivery.event).id
                    if id != "receipt-reducer:1:0" { ids.append(id) }
                    consumer.ack(delivery.seq)
                    if ids.count == expected.count { break }
                }
                #expect(ids == expected)

                // A query through the gateway, answered by the restarted reducer, equals the fold's.
                let params = #"{"cid":"\#(Self.cid)","viewer":"u0"}"#
                let answer = try await client.request(service: "receipts", method: "channel_state", params: params)
                let local = try reducer.query(method: "channel_state", params: try JSONParser.parse(Array(params.utf8)))
                #expect(try JSONParser.parse(answer) == JSONParser.parse(local))
            }
        }
    }

    /// `--backend-users`: on a cluster with users per role, each plugin gets its own user's URL
    /// (DATA/users/plugin-NAME.url) as its EVENTBUS_STATE, and its lease, state and output
    /// work under that user, which may write nothing but its own stage and state.
    @Test func eachPluginKeepsItsStateUnderItsOwnUser() async throws {
        try await withDeadline(.seconds(300)) {
            let test = try TestCluster(nodes: 1, users: try ClusterUsers(plugins: ["receipt-reducer"]))
            let directory = try test.scratchDirectory("users")
            let users = try test.scratchDirectory("users/users")
            // What `eventbus cluster up` writes into DATA/users.
            for file in test.cluster.config.credentialFiles {
                let name = URL(fileURLWithPath: file.path).lastPathComponent
                try file.text.write(toFile: users + "/" + name, atomically: true, encoding: .utf8)
            }
            let own = test.urls(for: .plugin("receipt-reducer")).joined(separator: ",")
            let (up, _) = try await Self.startUp(urls: test.urls, directory: directory, data: directory + "/data", run: 1,
                                                 extra: ["--backend-users", users])
            try await awaitingStop(up) {
                let pid = try #require(Self.child(named: "receipt-reducer", of: up.processIdentifier))
                let environ = try #require(FileManager.default.contents(atPath: "/proc/\(pid)/environ"))
                let variables = environ.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
                #expect(variables.contains("EVENTBUS_STATE=\(own)"))
                #expect(own.contains("plugin-receipt-reducer:"))

                let events = Self.script(acks: 60)
                let client = try BusClient(options: BusClientOptions(endpoint: "ipc://\(directory)/command.sock", requestTimeout: .seconds(30)))
                defer { client.close() }
                _ = try await client.publish(events)
                let expected = try Self.fold(events).ids
                #expect(try await Self.outputIDs(client, count: expected.count, consumer: "check-users") == expected)
            }
        }
    }

    @Test func anUnreachableClusterEndsUpNamingTheAddress() async throws {
        try await TemporaryDirectory.with("up-backend") { root in
            let address = "nats://127.0.0.1:1"
            let unreachable = try await RunningProcess.run(BuildFolder.eventbus, [
                "up", "--backend", address, "--pipeline", "receipt-reducer",
                "--data-dir", root.appendingPathComponent("data").path, "--command", "ipc://\(root.path)/c.sock",
            ])
            #expect(unreachable.status != 0)
            #expect(unreachable.standardError.contains(address), "\(unreachable.standardError)")
        }
    }

    @Test func aPluginWithoutItsUserFileEndsUpNamingTheFile() async throws {
        try await TemporaryDirectory.with("up-users") { root in
            let missing = try await RunningProcess.run(BuildFolder.eventbus, [
                "up", "--backend", "nats://127.0.0.1:1", "--pipeline", "receipt-reducer", "--backend-users", root.path,
                "--data-dir", root.appendingPathComponent("data").path, "--command", "ipc://\(root.path)/c.sock",
            ])
            #expect(missing.status != 0)
            #expect(missing.standardError.contains(root.path + "/plugin-receipt-reducer.url"), "\(missing.standardError)")
            let alone = try await RunningProcess.run(BuildFolder.eventbus, [
                "up", "--backend-users", root.path, "--data-dir", root.appendingPathComponent("data").path,
            ])
            #expect(alone.status != 0)
            #expect(alone.standardError.contains("--backend-users needs --backend"), "\(alone.standardError)")
        }
    }

    /// Starts `eventbus up --backend` with `pipeline` (nil: the default one) on `data`, its
    /// command socket `endpoint` (by default in `directory`), and waits until its stderr
    /// (`directory`/up-`run`.stderr) has `line`, by default the ready line; the process and
    /// its stderr's path.
    static func startUp(urls: [String], directory: String, data: String, run: Int,
                        pipeline: String? = "receipt-reducer", extra: [String] = [],
                        endpoint: String? = nil, until line: String = "eventbus ready") async throws -> (RunningProcess, String) {
        let stderr = directory + "/up-\(run).stderr"
        let up = try RunningProcess(BuildFolder.eventbus, [
            "up", "--backend", urls.joined(separator: ","),
            "--data-dir", data, "--command", endpoint ?? "ipc://\(directory)/command.sock",
        ] + (pipeline.map { ["--pipeline", $0] } ?? []) + extra, standardError: .file(stderr))
        var patience = Patience(.seconds(60))
        while !((try? String(contentsOfFile: stderr, encoding: .utf8)) ?? "").contains(line) {
            guard up.isRunning, patience.allowsAnotherLook() else {
                _ = try? await up.kill()
                throw TestFailure("eventbus up --backend not ready: \((try? String(contentsOfFile: stderr, encoding: .utf8)) ?? "")")
            }
            try await Task.sleep(for: .milliseconds(50))  // a poll interval
        }
        return (up, stderr)
    }

    /// The ids of the first `count` events of `out` but the channel.created passed on.
    static func outputIDs(_ client: BusClient, count: Int, consumer name: String) async throws -> [String] {
        let consumer = try await client.consume(name: name, start: .earliest, credit: 1_000, prefixes: ["out/"])
        var ids: [String] = []
        for try await delivery in consumer {
            let id = try EventValidator.scanEnvelope(delivery.event).id
            if id != "receipt-reducer:1:0" { ids.append(id) }
            consumer.ack(delivery.seq)
            if ids.count == count { break }
        }
        try await consumer.cancel()
        return ids
    }

    /// The reducer stopped on one "machine" (data directory) resumes on another from the
    /// snapshot it committed to the cluster's KV bucket, not from the start of `in`.
    @Test func theReducerResumesOnAnotherMachineFromItsSnapshotInKV() async throws {
        try await withDeadline(.seconds(600)) {
            let test = try TestCluster(nodes: 1)
            let directory = try test.scratchDirectory("move")
            let events = Self.script(acks: 400)
            let half = 230
            let endpoint = "ipc://\(directory)/command.sock"

            let (first, _) = try await Self.startUp(urls: test.urls, directory: directory, data: directory + "/machine-a", run: 1)
            try await awaitingStop(first) {
                let client = try BusClient(options: BusClientOptions(endpoint: endpoint, requestTimeout: .seconds(30)))
                defer { client.close() }
                _ = try await client.publish(Array(events[..<half]))
                let expected = try Self.fold(Array(events[..<half])).ids
                #expect(try await Self.outputIDs(client, count: expected.count, consumer: "check-a") == expected)
            }

            let (second, log) = try await Self.startUp(urls: test.urls, directory: directory, data: directory + "/machine-b", run: 2)
            try await awaitingStop(second) {
                let restored = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
                    .first { $0.contains("plugin state restored") }
                let line = try #require(restored, "no state restored on the second machine")
                #expect(!line.contains("bus.seq=0 "), "\(line)")
                let client = try BusClient(options: BusClientOptions(endpoint: endpoint, requestTimeout: .seconds(30)))
                defer { client.close() }
                _ = try await client.publish(Array(events[half...]))
                let (expected, reducer) = try Self.fold(events)
                #expect(try await Self.outputIDs(client, count: expected.count, consumer: "check-b") == expected)
                let answer = try await client.request(service: "receipts", method: "unread_counts", params: #"{"user_id":"u3"}"#)
                let local = try reducer.query(method: "unread_counts", params: try JSONParser.parse(Array(#"{"user_id":"u3"}"#.utf8)))
                #expect(try JSONParser.parse(answer) == JSONParser.parse(local))
            }
        }
    }

    /// Two machines run the pipeline on one cluster, each with its own gateway: the
    /// reducer's instance on B waits while A's holds the lease. A dies whole (SIGKILL of its
    /// `up` and of its reducer); B's instance takes the lease once it lapses and goes on
    /// from A's last snapshot, and `out` is exactly what the pure fold writes for every
    /// event, published through A's gateway and then through B's: each output once, in
    /// order, A's repeats dropped by JetStream's dedup.
    @Test func aStandbyOnAnotherMachineTakesOverWhenTheFirstDies() async throws {
        try await withDeadline(.seconds(600)) {
            let test = try TestCluster(nodes: 1)
            let directory = try test.scratchDirectory("standby")
            let events = Self.script(acks: 400)
            let half = 230
            let (endpointA, endpointB) = ("ipc://\(directory)/a.sock", "ipc://\(directory)/b.sock")

            let (a, _) = try await Self.startUp(urls: test.urls, directory: directory, data: directory + "/machine-a", run: 1,
                                                endpoint: endpointA)
            defer { if a.isRunning { a.signal(SIGKILL) } }
            // B is never ready while A's reducer holds the lease: its own waits.
            let (b, logB) = try await Self.startUp(urls: test.urls, directory: directory, data: directory + "/machine-b", run: 2,
                                                   endpoint: endpointB, until: "waiting for the lease another instance holds")
            try await awaitingStop(b) {
                let clientA = try BusClient(options: BusClientOptions(endpoint: endpointA, requestTimeout: .seconds(30)))
                _ = try await clientA.publish(Array(events[..<half]))
                let expectedA = try Self.fold(Array(events[..<half])).ids
                #expect(try await Self.outputIDs(clientA, count: expectedA.count, consumer: "check-a") == expectedA)
                clientA.close()

                let reducerA = try #require(Self.child(named: "receipt-reducer", of: a.processIdentifier))
                let clock = ContinuousClock()
                let died = clock.now
                kill(reducerA, SIGKILL)
                _ = try await a.kill()

                let clientB = try BusClient(options: BusClientOptions(endpoint: endpointB, requestTimeout: .seconds(30)))
                defer { clientB.close() }
                _ = try await clientB.publish(Array(events[half...]))
                let (expected, reducer) = try Self.fold(events)
                #expect(try await Self.outputIDs(clientB, count: expected.count, consumer: "check-b") == expected)
                Logger(label: "test.standby").notice("machine A died; B's reducer wrote every output", metadata: [
                    "test.after": "\(clock.now - died)",
                ])
                let log = (try? String(contentsOfFile: logB, encoding: .utf8)) ?? ""
                #expect(log.contains("lease taken"), "B's reducer never took the lease")
                let answer = try await clientB.request(service: "receipts", method: "unread_counts", params: #"{"user_id":"u3"}"#)
                let local = try reducer.query(method: "unread_counts", params: try JSONParser.parse(Array(#"{"user_id":"u3"}"#.utf8)))
                #expect(try JSONParser.parse(answer) == JSONParser.parse(local))
            }
        }
    }

    /// The default pipeline (reducer and both privacy filters) on a three-node cluster:
    /// the privacy contract of docs/privacy.md holds as on the embedded broker — bob's
    /// hidden read withheld from `out` and audited on `diag`, counts and `views` of
    /// `message_receipts` as each viewer may see them (PrivacyPipelineTests, on JetStream).
    @Test func theDefaultPipelineWithholdsHiddenReceiptsOnThreeNodes() async throws {
        try await withDeadline(.seconds(600)) {
            let test = try TestCluster(nodes: 3)
            let directory = try test.scratchDirectory("privacy")
            let cid = "messaging:general"
            func ingress(_ n: Int, _ type: String, subject: String = cid, _ data: String) -> [UInt8] {
                Array(#"{"specversion":"1.0","id":"p\#(n)","source":"/test","type":"\#(type)","subject":"\#(subject)","time":"2026-11-22T03:10:00.123Z","data":\#(data)}"#.utf8)
            }
            let events = [
                ingress(1, "channel.created", #"{"cid":"\#(cid)","members":["ann","bob","cat"]}"#),
                ingress(2, "message.new", #"{"cid":"\#(cid)","message":{"id":"m1","user_id":"ann","created_at":"2026-11-22T03:00:00.000Z"}}"#),
                ingress(3, "message.new", #"{"cid":"\#(cid)","message":{"id":"m2","user_id":"ann","created_at":"2026-11-22T03:00:01.000Z"}}"#),
                ingress(4, "user.updated", subject: "@bob", #"{"user":{"id":"bob","privacy_settings":{"read_receipts":{"enabled":false}}}}"#),
                ingress(10, "message.read", #"{"cid":"\#(cid)","user_id":"bob","message_id":"m1"}"#),
                ingress(11, "message.read", #"{"cid":"\#(cid)","user_id":"cat","message_id":"m1"}"#),
                ingress(12, "message.delivered", #"{"cid":"\#(cid)","user_id":"bob","message_id":"m2"}"#),
            ]
            // As on the broker: the channel.created the reducer passes on is private to `out`'s store.
            let filtered = [
                "out/\(cid)/message.new", "out/\(cid)/message.new",
                "out/@bob/notification.mark_read",
                "out/\(cid)/message.read", "out/@cat/notification.mark_read",
                "out/\(cid)/message.delivered",
            ]
            let (up, _) = try await Self.startUp(urls: test.urls, directory: directory, data: directory + "/data", run: 1, pipeline: nil)
            try await awaitingStop(up) {
                let client = try BusClient(options: BusClientOptions(endpoint: "ipc://\(directory)/command.sock", requestTimeout: .seconds(30)))
                defer { client.close() }
                _ = try await client.publish(events)
                var topics: [String] = []
                let out = try await client.consume(name: "check-out", start: .earliest, credit: 100, prefixes: ["out/"])
                for try await delivery in out {
                    topics.append(delivery.topic)
                    out.ack(delivery.seq)
                    if topics.count == filtered.count { break }
                }
                #expect(topics == filtered)
                let diag = try await client.consume(name: "check-diag", start: .earliest, credit: 100, prefixes: ["diag/"])
                for try await delivery in diag {
                    let event = try JSONParser.parse(delivery.event)
                    if delivery.topic == "diag/\(cid)/receipt.suppressed" {
                        #expect(event["data"]?["reason"]?.stringValue == "user_setting")
                        #expect(event["data"]?["policy"]?.stringValue == "read-privacy")
                        break
                    }
                }
                let receipts = try JSONParser.parse(try await client.request(
                    service: "receipts", method: "message_receipts", params: #"{"cid":"\#(cid)","message_id":"m1","viewer":"ann"}"#))
                #expect(receipts["read_count"]?.int64Value == 1)
                #expect(receipts["hidden_member_count"]?.int64Value == 1)
                #expect(receipts["views"] == nil)
                let own = try JSONParser.parse(try await client.request(
                    service: "receipts", method: "message_receipts", params: #"{"cid":"\#(cid)","message_id":"m1","viewer":"bob"}"#))
                // bob read m1 with read receipts off: not even his own view counts it (docs/events.md rule 19).
                #expect(own["read_count"]?.int64Value == 1)
            }
        }
    }

    /// Runs `body`, then stops `process` with SIGTERM whether `body` threw or not; a
    /// clean stop exits 0.
    func awaitingStop(_ process: RunningProcess, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            _ = try? await process.terminate()
            throw error
        }
        #expect(try await process.terminate() == 0)
    }
}
