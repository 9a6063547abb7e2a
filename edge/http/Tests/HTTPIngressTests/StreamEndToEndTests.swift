import EventBus
import EventBusTesting
import Foundation
import HTTPIngress
import Testing

/// `GET /v1/stream` of the real `eventbus-http` against a real `eventbus up`: SSE framing and
/// order, resuming after a kill -9, per-user scoping, tokens, and a client that falls behind.
@Suite(.serialized) struct StreamEndToEndTests {
    /// The SEQs and message ids of stage `out` read straight from the log (a durable consumer
    /// of the test's own), through the first event for which `last` holds.
    static func outLog(_ client: BusClient, prefix: String = "out/", through last: (Delivery) -> Bool) async throws -> [Delivery] {
        let consumer = try await client.consume(name: "http-test.out-\(UInt32.random(in: 0...UInt32.max))", start: .earliest, prefixes: [prefix])
        var found: [Delivery] = []
        for try await delivery in consumer {
            found.append(delivery)
            consumer.ack(delivery.seq)
            if last(delivery) { break }
        }
        try await consumer.cancel()
        return found
    }

    static func messageID(_ delivery: Delivery) -> String? {
        let data = (try? JSONParser.parse(delivery.event))?["data"]
        return data?["message"]?["id"]?.stringValue ?? data?["last_read_message_id"]?.stringValue
    }

    static func messages(_ range: Range<Int>, in cid: String = "messaging:general", text: Int = 0) -> [[UInt8]] {
        range.map { index in
            let body = text == 0 ? "" : #","text":"\#(String(repeating: "t", count: text))""#
            return Array(Events.event("new-m\(index)", "message.new", subject: cid, data:
                #"{"cid":"\#(cid)","message":{"id":"m\#(index)","user_id":"ann","created_at":"2026-11-22T03:10:00.000Z"\#(body)}}"#).utf8)
        }
    }

    /// Checks SSE framing: each event has an increasing `id:` SEQ, `event:` its CloudEvent's type, one-line JSON `data:`.
    static func checkFraming(_ events: [SSEReader.Message]) {
        var previous: UInt64 = 0
        for event in events {
            guard let seq = event.seq, let json = event.json else {
                Issue.record("an event without a SEQ id or JSON data: \(event)")
                continue
            }
            #expect(seq > previous, "SEQs increase: \(seq) after \(previous)")
            previous = seq
            #expect(event.event == json["type"]?.stringValue, "event: is the CloudEvent's type")
            #expect(event.data?.contains("\n") == false)
        }
    }

    @Test(arguments: Backend.allCases)
    func eventsArriveInOrderAndResumeAfterAKill(on backend: Backend) async throws {
        try await backend.with { arguments in try await Self.eventsArriveInOrderAndResumeAfterAKill(arguments: arguments) }
    }

    static func eventsArriveInOrderAndResumeAfterAKill(arguments: [String]) async throws {
        let up = try UpProcess(arguments: arguments)
        try await up.start(within: .seconds(60))
        try await up.terminateAfter {
            let client = try BusClient(options: .init(endpoint: up.commandEndpoint, name: "http-test"))
            defer { client.close() }
            let first = try IngressProcess(command: up.commandEndpoint, arguments: ["--stream-heartbeat", "0.2"])
            try await first.start()
            let reader = try StreamClient(first.baseURL + "/v1/stream?after=0")
            try await reader.waitUntilOpen()
            _ = try await client.publish([Array(Events.channel("messaging:general", ["ann", "bob"]).utf8)] + Self.messages(0..<10))
            let seen = try await reader.wait(for: "m9 and a heartbeat") { messages in
                messages.contains { $0.messageID == "m9" } && messages.contains { $0.comment == "heartbeat" }
            }.filter { $0.comment == nil }
            Self.checkFraming(seen)
            #expect(seen.allSatisfy { $0.json?["source"]?.stringValue == "/eventbus/receipt-reducer" })
            #expect(seen.compactMap(\.messageID) == (0..<10).map { "m\($0)" })

            // kill -9: the client keeps what it saw; events go on being logged meanwhile.
            first.process?.signal(SIGKILL)
            _ = try await first.process?.exitStatus(within: .seconds(10))
            _ = try await client.publish(Self.messages(10..<20))
            let second = try IngressProcess(command: up.commandEndpoint)
            try await second.start()
            let last = try #require(seen.last?.id)
            let resumed = try StreamClient(second.baseURL + "/v1/stream", headers: ["Last-Event-ID": last])
            try await resumed.waitUntilOpen()
            // A read makes two events with consecutive SEQs: message.read, then the reader's notification.mark_read.
            _ = try await client.publish(Self.messages(20..<25) + [Array(Events.read("bob", "m24").utf8)])
            let rest = try await resumed.wait(for: "bob's read") { $0.contains { $0.event == "notification.mark_read" } }.filter { $0.comment == nil }
            Self.checkFraming(rest)

            let log = try await Self.outLog(client) { $0.topic.hasSuffix("/notification.mark_read") }
            #expect((seen + rest).compactMap(\.seq) == log.map(\.seq), "every event of out once, in order, across the kill")
            #expect((seen + rest).compactMap(\.messageID) == (0..<25).map { "m\($0)" } + ["m24", "m24"])

            // Resumed between the two: the second one first.
            let pair = try #require(log.indices.dropLast().first { log[$0 + 1].seq == log[$0].seq + 1 }, "no consecutive SEQs in \(log.map(\.seq))")
            let between = try StreamClient(second.baseURL + "/v1/stream?after=\(log[pair].seq)")
            let afterPair = try await between.wait(for: "the event after \(log[pair].seq)") { $0.contains { $0.comment == nil } }
            #expect(afterPair.first { $0.comment == nil }?.seq == log[pair + 1].seq)
            try await second.terminate()
        }
    }

    static let backendToken = "backend-token-for-the-stream-test-001"
    static let jwtSecret = "jwt-secret-for-the-stream-test-0123456789"
    /// The app's ES256 key, beside the HS256 secret: its public key is in the security file.
    static let es256 = ES256Signer(keyID: "stream-test")

    /// `eventbus up --http` with keys, tokens and an app-token secret: the ingress reads `in` and `out` with the key up gives it.
    static func withSecuredUp(on backend: Backend = .broker, _ body: (String, AppTokenVerifier) async throws -> Void) async throws {
        try await backend.with { arguments in try await withSecuredUp(arguments: arguments, body) }
    }

    private static func withSecuredUp(arguments: [String], _ body: (String, AppTokenVerifier) async throws -> Void) async throws {
        let directory = try TemporaryDirectory.create("eventbus-http-stream-keys")
        defer { try? FileManager.default.removeItem(at: directory) }
        let security = try await SecurityFile.write(in: directory, tokens: [backendToken: "backend"], jwtSecret: jwtSecret, es256Keys: [es256.jwk])
        let port = try EphemeralEndpoint.freePort()
        let up = try UpProcess(arguments: ["--http", "127.0.0.1:\(port)", "--security", security.path] + arguments,
                               environment: ["EVENTBUS_HTTP": BuildFolder.http])
        try await up.start(within: .seconds(60))
        try await up.terminateAfter {
            let base = "http://127.0.0.1:\(port)"
            try await UpWithHTTPTests.waitForHealth(base, up)
            try await body(base, try AppTokenVerifier(secret: jwtSecret))
            if arguments.contains("--backend") {
                // The gateway served a user stream's two consumers, of `out` and of `in`.
                let attached = up.log.split(separator: "\n").filter { $0.contains("[EventBusJetStream] consumer attached") }
                #expect(attached.contains { $0.contains("bus.consumer=eventbus-http.") && $0.contains("bus.stage=out") }, "\(attached)")
                #expect(attached.contains { $0.contains("bus.consumer=eventbus-http.") && $0.contains("-in ") && $0.contains("bus.stage=in") },
                        "\(attached)")
            }
        }
    }

    @Test func aShortAppTokenSecretStopsTheIngress() async throws {
        let directory = try TemporaryDirectory.create("eventbus-http-short-secret")
        defer { try? FileManager.default.removeItem(at: directory) }
        let security = try await SecurityFile.write(in: directory, tokens: [Self.backendToken: "backend"], jwtSecret: "only-31-bytes-of-secret-0123456")
        let ingress = try IngressProcess(command: "ipc:///nonexistent/command.sock", arguments: ["--security", security.path])
        await #expect(throws: ProcessError.self) { try await ingress.start() }
        #expect(ingress.log.contains("http_jwt_hs256_secret must be a string of at least 32 bytes"), "\(ingress.log)")
        #expect(ingress.process?.terminationStatus == 64)
    }

    @Test func anES256KeyOffTheCurveStopsTheIngressNamingIt() async throws {
        let directory = try TemporaryDirectory.create("eventbus-http-bad-es256")
        defer { try? FileManager.default.removeItem(at: directory) }
        // The shape of a P-256 JWK (the broker accepts it), but x and y are not a point of the curve.
        let offCurve = #"{"kty": "EC", "crv": "P-256", "kid": "bad", "x": "\#(ES256Signer.part([UInt8](repeating: 1, count: 32)))", "#
            + #""y": "\#(ES256Signer.part([UInt8](repeating: 2, count: 32)))"}"#
        let security = try await SecurityFile.write(in: directory, tokens: [Self.backendToken: "backend"], es256Keys: [Self.es256.jwk, offCurve])
        let ingress = try IngressProcess(command: "ipc:///nonexistent/command.sock", arguments: ["--security", security.path])
        await #expect(throws: ProcessError.self) { try await ingress.start() }
        #expect(ingress.log.contains("http_jwt_es256_keys[1] (kid bad): x and y are not a point of P-256"), "\(ingress.log)")
        #expect(ingress.process?.terminationStatus == 64)
    }

    /// On either backend: a cluster's gateway has no consumer spanning stages, so the stream
    /// reads `in` and `out` with a consumer each.
    @Test(arguments: Backend.allCases)
    func aUserSeesOnlyTheirChannelsEvenAfterRemovalAndTokensAreChecked(on backend: Backend) async throws {
        try await Self.withSecuredUp(on: backend) { base, tokens in
            let backend = ["Authorization": "Bearer \(Self.backendToken)"]
            let bob = ["Authorization": "Bearer " + tokens.sign(user: "bob", expires: Date().addingTimeInterval(3_600))]
            let ann = ["Authorization": "Bearer " + tokens.sign(user: "ann", expires: Date().addingTimeInterval(3_600))]
            let bobs = try StreamClient(base + "/v1/stream?after=0", headers: bob)
            let anns = try StreamClient(base + "/v1/stream?after=0", headers: ann)
            let all = try StreamClient(base + "/v1/stream?after=0", headers: backend)
            for client in [bobs, anns, all] { try await client.waitUntilOpen() }

            func publish(_ events: [String]) async throws {
                let reply = try await HTTPExchange.send(base + "/v1/events", headers: Events.batched.merging(backend) { $1 }, body: Events.batch(events))
                try #require(reply.status == 200, "\(reply.text)")
            }
            // One batch: its events are all in `in` before the reducer appends anything to `out`,
            // so bob's removal precedes, in the log, the outputs for g1 (sent while he was a
            // member: shown) as well as g2's (sent after: not shown). Membership is judged where
            // an output was caused, whatever the pipeline's speed.
            try await publish([
                Events.channel("messaging:general", ["ann", "bob"]), Events.channel("messaging:secret", ["ann"]),
                Events.message("g1", from: "ann"), Events.message("s1", from: "ann", in: "messaging:secret"),
                Events.read("bob", "g1"), Events.read("ann", "s1", in: "messaging:secret"),
                Events.event("remove-bob", "member.removed", subject: "messaging:general", data: #"{"cid":"messaging:general","user_id":"bob"}"#),
                Events.message("g2", from: "ann"), Events.read("ann", "g2"),
                // The end of the test for bob: a channel he is in, after all the rest.
                Events.channel("messaging:last", ["bob"]), Events.message("l1", from: "bob", in: "messaging:last"),
            ])
            let bobSaw = try await bobs.wait(for: "l1") { $0.contains { $0.messageID == "l1" } }.filter { $0.comment == nil }
            let annSaw = try await anns.wait(for: "g2 read") { $0.contains { $0.event == "message.read" && $0.messageID == "g2" } }
            let allSaw = try await all.wait(for: "l1") { $0.contains { $0.messageID == "l1" } }.filter { $0.comment == nil }
            Self.checkFraming(bobSaw)

            let subjects = { (events: [SSEReader.Message]) in Set(events.compactMap { $0.json?["subject"]?.stringValue }) }
            #expect(subjects(bobSaw) == ["messaging:general", "@bob", "messaging:last"], "\(bobSaw)")
            #expect(bobSaw.contains { $0.messageID == "g1" && $0.event == "message.new" })
            #expect(!bobSaw.contains { $0.messageID == "g2" || $0.messageID == "s1" }, "nothing of general after his removal, nothing of secret")
            #expect(subjects(annSaw).isSuperset(of: ["messaging:general", "messaging:secret", "@ann"]))
            #expect(!subjects(annSaw).contains("@bob"))
            #expect(subjects(allSaw).isSuperset(of: subjects(bobSaw).union(["messaging:secret", "@ann"])))
            let allSeqs = Set(allSaw.compactMap(\.seq))
            #expect(Set(bobSaw.compactMap(\.seq)).isSubset(of: allSeqs), "bob's events are events of out")

            // Replayed from the start, membership is rebuilt in log order: the same events.
            let again = try StreamClient(base + "/v1/stream", headers: bob.merging(["Last-Event-ID": "0"]) { $1 })
            let replayed = try await again.wait(for: "l1 again") { $0.contains { $0.messageID == "l1" } }.filter { $0.comment == nil }
            #expect(replayed.compactMap(\.seq) == bobSaw.compactMap(\.seq), "\(again.text)")

            // Without a position, after the head of `out` (the broker's one sequence, or the gateway's of `out`).
            let fresh = try StreamClient(base + "/v1/stream", headers: backend)
            try await fresh.waitUntilOpen()
            let opening = try #require(fresh.messages.first?.comment)
            let head = try #require(UInt64(opening.dropFirst("eventbus stream after ".count)), "\(opening)")
            #expect(head >= allSeqs.max() ?? .max, "\(opening)")

            // Tokens: none, forged, expired, an app token where it may not go, a prefix outside out.
            let none = try await HTTPExchange.send(base + "/v1/stream", method: "GET")
            #expect(none.status == 401 && none.code == "unauthorized" && none.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
            let forged = try AppTokenVerifier(secret: Self.jwtSecret + "-not-the-one").sign(user: "bob", expires: .distantFuture)
            let refused = try await HTTPExchange.send(base + "/v1/stream", method: "GET", headers: ["Authorization": "Bearer \(forged)"])
            #expect(refused.status == 401, "\(refused.text)")
            #expect(try refused.json()["detail"]?.stringValue?.contains("signature") == true)
            let expired = tokens.sign(user: "bob", expires: Date().addingTimeInterval(-3_600))
            #expect(try await HTTPExchange.send(base + "/v1/stream", method: "GET", headers: ["Authorization": "Bearer \(expired)"]).status == 401)
            let publishing = try await HTTPExchange.send(base + "/v1/events", headers: Events.structured.merging(bob) { $1 },
                                                         body: Array(Events.read("bob", "g1").utf8))
            #expect(publishing.status == 403 && publishing.code == "forbidden", "\(publishing.text)")
            #expect(try await HTTPExchange.send(base + "/v1/stream/stats", method: "GET", headers: bob).status == 403)
            let stats = try await HTTPExchange.send(base + "/v1/stream/stats", method: "GET", headers: backend)
            let open = try stats.json()["open"]?.int64Value ?? 0
            #expect(stats.status == 200 && open >= 3, "\(stats.text)")
            let outside = try await HTTPExchange.send(base + "/v1/stream?prefix=in/", method: "GET", headers: backend)
            #expect(outside.status == 400 && outside.code == "bad_request")
        }
    }

    /// `channel.deleted` and `user.deleted` (docs/events.md, rules 20 and 22) end memberships in
    /// log order: a channel created again never shows its old members anything, and a deleted
    /// user's token sees no channel event until they are added somewhere again.
    @Test(arguments: Backend.allCases)
    func aDeletedChannelOrUserEndsMembershipInLogOrder(on backend: Backend) async throws {
        try await Self.withSecuredUp(on: backend) { base, tokens in
            let backend = ["Authorization": "Bearer \(Self.backendToken)"]
            func token(_ user: String) -> [String: String] {
                ["Authorization": "Bearer " + tokens.sign(user: user, expires: Date().addingTimeInterval(3_600))]
            }
            let bobs = try StreamClient(base + "/v1/stream?after=0", headers: token("bob"))
            // dan's app signs ES256: the same scoping, by the public key of the security file.
            let danToken = try Self.es256.sign(user: "dan", expires: Date().addingTimeInterval(3_600))
            let dans = try StreamClient(base + "/v1/stream?after=0", headers: ["Authorization": "Bearer \(danToken)"])
            let anns = try StreamClient(base + "/v1/stream?after=0", headers: token("ann"))
            for client in [bobs, dans, anns] { try await client.waitUntilOpen() }
            func publish(_ events: [String]) async throws {
                let reply = try await HTTPExchange.send(base + "/v1/events", headers: Events.batched.merging(backend) { $1 }, body: Events.batch(events))
                try #require(reply.status == 200, "\(reply.text)")
            }
            let reborn = "messaging:reborn", team = "messaging:team", end = "messaging:end"
            try await publish([
                Events.channel(reborn, ["ann", "bob"]), Events.channel(team, ["ann", "dan"]),
                Events.message("r1", from: "ann", in: reborn), Events.message("t1", from: "ann", in: team),
            ])
            try await publish([
                Events.event("delete-reborn", "channel.deleted", subject: reborn, data: #"{"cid":"messaging:reborn"}"#),
                // Rejected by the reducer (unknown_channel): it must not make bob a member either.
                Events.event("add-bob-deleted", "member.added", subject: reborn, data: #"{"cid":"messaging:reborn","user_id":"bob"}"#),
                Events.event("recreate-reborn", "channel.created", subject: reborn, data: #"{"cid":"messaging:reborn","members":["ann"]}"#),
                Events.message("r2", from: "ann", in: reborn), Events.read("ann", "r2", in: reborn),
                Events.event("delete-dan", "user.deleted", subject: "@dan", data: #"{"user_id":"dan"}"#),
                Events.message("t2", from: "ann", in: team), Events.read("ann", "t2", in: team),
                // The end of the test for both: a channel they are in (dan again, as a restored user), after all the rest.
                Events.channel(end, ["bob", "dan"]), Events.message("e1", from: "bob", in: end),
            ])
            let bobSaw = try await bobs.wait(for: "e1") { $0.contains { $0.messageID == "e1" } }.filter { $0.comment == nil }
            let danSaw = try await dans.wait(for: "e1") { $0.contains { $0.messageID == "e1" } }.filter { $0.comment == nil }
            let annSaw = try await anns.wait(for: "t2 read") { $0.contains { $0.event == "message.read" && $0.messageID == "t2" } }
            Self.checkFraming(bobSaw)
            Self.checkFraming(danSaw)
            #expect(annSaw.contains { $0.messageID == "r2" } && annSaw.contains { $0.messageID == "t2" }, "the events exist in out: \(annSaw)")

            let subjects = { (events: [SSEReader.Message]) in Set(events.compactMap { $0.json?["subject"]?.stringValue }) }
            #expect(bobSaw.contains { $0.messageID == "r1" }, "bob saw the first messaging:reborn")
            #expect(bobSaw.contains { $0.event == "notification.channel_deleted" }, "his devices are told of the deletion: \(bobSaw)")
            #expect(!bobSaw.contains { $0.messageID == "r2" }, "nothing of the channel created again without him: \(bobSaw)")
            #expect(subjects(bobSaw) == [reborn, "@bob", end], "\(bobSaw)")
            #expect(danSaw.contains { $0.messageID == "t1" }, "dan saw messaging:team before his deletion")
            #expect(!danSaw.contains { $0.messageID == "t2" }, "nothing of his channels after user.deleted: \(danSaw)")
            #expect(subjects(danSaw).isSubset(of: [team, "@dan", end]) && subjects(danSaw).contains(end), "\(danSaw)")

            // Replayed from the start, the same: membership is rebuilt in log order.
            let again = try StreamClient(base + "/v1/stream", headers: token("bob").merging(["Last-Event-ID": "0"]) { $1 })
            let replayed = try await again.wait(for: "e1 again") { $0.contains { $0.messageID == "e1" } }.filter { $0.comment == nil }
            #expect(replayed.compactMap(\.seq) == bobSaw.compactMap(\.seq))
        }
    }

    /// The resident memory of process `pid`, in bytes (VmRSS).
    static func residentBytes(_ pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try #require(Int(line.split(separator: " ").dropFirst().first ?? "")) * 1_024
    }

    static func streamStats(_ base: String) async throws -> JSONValue {
        try await HTTPExchange.send(base + "/v1/stream/stats", method: "GET").json()
    }

    /// Waits until the stream counters satisfy `done`.
    static func waitForStats(_ base: String, _ what: String, until done: (JSONValue) -> Bool) async throws -> JSONValue {
        var patience = Patience(.seconds(120))
        var stats = try await streamStats(base)
        while !done(stats), patience.allowsAnotherLook() {
            try await Task.sleep(for: .milliseconds(100))  // a poll interval
            stats = try await streamStats(base)
        }
        try #require(done(stats), "\(what): \(stats)")
        return stats
    }

    @Test func aClientThatFallsBehindIsCutWithItsPositionAndNobodyElseWaits() async throws {
        // More than a round of published events (out comes in bursts), so that only the stopped client falls behind.
        let buffer = 128, round = 10, size = 32_000
        let up = try UpProcess()
        try await up.start()
        try await up.terminateAfter {
            let client = try BusClient(options: .init(endpoint: up.commandEndpoint, name: "http-test"))
            defer { client.close() }
            let ingress = try IngressProcess(command: up.commandEndpoint, arguments: [
                "--stream-buffer", "\(buffer)", "--stream-heartbeat", "1", "--stream-cut-grace", "10"])
            try await ingress.start()
            let pid = try #require(ingress.process?.processIdentifier)
            let fast = try StreamClient(ingress.baseURL + "/v1/stream?after=0")
            let slow = try StreamClient(ingress.baseURL + "/v1/stream?after=0")
            for reader in [fast, slow] { try await reader.waitUntilOpen() }
            slow.pause()
            _ = try await client.publish(Array(Events.channel("messaging:general", ["ann", "bob"]).utf8))
            let before = try Self.residentBytes(pid)

            // Rounds of messages of 32 KB until the stopped client's socket buffers are full and its stream buffer overflows.
            var published = 0
            var stats = try await Self.streamStats(ingress.baseURL)
            while (stats["cut"]?.int64Value ?? 0) == 0, published < 2_000 {
                _ = try await client.publish(Self.messages(published..<published + round, text: size))
                published += round
                stats = try await Self.streamStats(ingress.baseURL)
            }
            try #require(stats["cut"]?.int64Value == 1, "the stopped client was never cut: \(stats)")
            let lastID = "m\(published - 1)"
            try await fast.wait(for: lastID) { $0.contains { $0.messageID == lastID } }
            // Loosely: what one buffer may hold, twice, and some slack, whatever went by; unbounded, the loop above reaches 64 MB.
            let grown = try Self.residentBytes(pid) - before
            #expect(grown < 2 * buffer * size + 24_000_000, "the server holds \(grown) bytes more after \(published * size) bytes went by a stopped client")
            stats = try await Self.streamStats(ingress.baseURL)
            #expect(stats["peak_buffered"]?.int64Value ?? .max <= Int64(buffer), "\(stats)")
            #expect(stats["buffer_capacity"]?.int64Value == Int64(buffer))

            // Resumed, the slow client reads what had reached it, then the cut event naming the last SEQ it got.
            slow.resume()
            let slowSaw = try await slow.wait(for: "the cut event") { $0.contains { $0.event == "cut" } }.filter { $0.comment == nil }
            let cut = try #require(slowSaw.last)
            #expect(cut.event == "cut" && cut.id == nil)
            let delivered = Array(slowSaw.dropLast())
            Self.checkFraming(delivered)
            let position = try #require(cut.json?["last_event_id"]?.stringValue)
            #expect(position == delivered.last?.id ?? "0", "\(cut)")
            #expect(cut.json?["reason"]?.stringValue == "slow_client")
            #expect(delivered.count < published, "it was cut before the end")
            _ = try await slow.process.exitStatus(within: .seconds(60))  // the server ended its response

            let resumed = try StreamClient(ingress.baseURL + "/v1/stream", headers: ["Last-Event-ID": position])
            let rest = try await resumed.wait(for: lastID) { $0.contains { $0.messageID == lastID } }.filter { $0.comment == nil }
            let log = try await Self.outLog(client) { Self.messageID($0) == lastID }
            #expect((delivered + rest).compactMap(\.seq) == log.map(\.seq), "cut and resumed: nothing lost, nothing twice")
            let fastSaw = fast.events
            #expect(fastSaw.compactMap(\.seq).prefix(log.count) == log.map(\.seq)[...], "the other client got everything")

            // A client that never reads again is cut and, after the grace, disconnected: only the two readers stay open.
            let stuck = try StreamClient(ingress.baseURL + "/v1/stream")
            try await stuck.waitUntilOpen()
            stuck.pause()
            var more = published
            stats = try await Self.streamStats(ingress.baseURL)
            while (stats["cut"]?.int64Value ?? 0) < 2, more < published + 2_000 {
                _ = try await client.publish(Self.messages(more..<more + round, text: size))
                more += round
                stats = try await Self.streamStats(ingress.baseURL)
            }
            _ = try await Self.waitForStats(ingress.baseURL, "the stuck client closed") {
                $0["cut"]?.int64Value == 2 && $0["open"]?.int64Value == 2
            }
            let finalID = "m\(more - 1)"
            try await fast.wait(for: finalID) { $0.contains { $0.messageID == finalID } }
            #expect(try await ingress.terminate() == 0, "open streams end with the server: \(ingress.log)")
        }
    }
}
