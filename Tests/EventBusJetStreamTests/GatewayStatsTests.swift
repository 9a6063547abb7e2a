import EventBus
@testable import EventBusJetStream
import EventBusTesting
import Foundation
import Testing

/// STATS on the gateway, in the broker's shape where the cluster has the figure.
@Suite struct GatewayStatsTests {
    @Test func theReplyHasStagesAndEachConsumersAckedAndLag() throws {
        let stats = GatewayStats(
            servers: ["nats://127.0.0.1:4222"], connectedURL: nil, replicas: 1, eventsInFlight: 0, batchesSent: 2, pubsBatched: 3,
            pendingRequests: 0,
            stages: [.init(name: "in", messages: 5, lastSequence: 5), .init(name: "out", messages: nil, lastSequence: nil)],
            consumers: [.init(name: "reader", stage: "in", prefixes: ["in/"], acked: 3, inFlight: 2, credit: 10),
                        .init(name: "tail", stage: "out", prefixes: ["out/"], acked: 0, inFlight: 0, credit: 1, client: "app")])
        let value = try #require(try JSONSerialization.jsonObject(with: Data(stats.json)) as? [String: Any])
        #expect((value["stages"] as? [String: Any])?["in"] as? Int == 5)
        #expect((value["stages"] as? [String: Any])?["out"] is NSNull)
        #expect((value["head_seqs"] as? [String: Any])?["in"] as? Int == 5)
        let consumers = try #require(value["consumers"] as? [[String: Any]])
        #expect(consumers[0]["acked"] as? Int == 3 && consumers[0]["lag"] as? Int == 2)
        #expect(consumers[0]["prefixes"] as? [String] == ["in/"] && consumers[0]["client"] == nil)
        // A stage JetStream did not report has no lag to give.
        #expect(consumers[1]["lag"] is NSNull && consumers[1]["client"] as? String == "app")
    }

    /// On a real cluster: the events of `in`, and a consumer's ack floor once its ACK went.
    @Test func aConsumersAckShowsInItsLag() async throws {
        try await withDeadline(.seconds(300)) {
            let fixture = try GatewayFixture()
            defer { fixture.stop() }
            let client = fixture.client
            _ = try await client.publish((1...5).map { GatewayTests.event("g\($0)") })
            let consumer = try await client.consume(name: "counted", start: .earliest, credit: 10, prefixes: ["in/"])
            for try await delivery in consumer where delivery.seq == 3 {
                consumer.ack(3)
                break
            }
            var patience = Patience(.seconds(30))
            var last: [String: Any] = [:]
            repeat {
                last = try #require(try JSONSerialization.jsonObject(with: Data(try await client.stats())) as? [String: Any])
                let row = (last["consumers"] as? [[String: Any]])?.first { $0["name"] as? String == "counted" }
                if row?["acked"] as? Int == 3 {
                    #expect(row?["lag"] as? Int == 2)
                    #expect((last["stages"] as? [String: Any])?["in"] as? Int == 5)
                    return
                }
                try await Task.sleep(for: .milliseconds(100))  // a poll interval
            } while patience.allowsAnotherLook()
            Issue.record("the ack floor never reached 3: \(last)")
        }
    }

    /// One gathering at a time: STATS that come during it wait for the next, each gets
    /// exactly one answer, and past the bound they are refused.
    @Test func aFloodOfStatsRunsOneGatheringAtATime() {
        func asker(_ n: Int) -> StatsGathering.Requester { .init(peer: [UInt8(n)], correlation: [UInt8(n), 1]) }
        var gathering = StatsGathering()
        #expect(gathering.finished() == ([], false))  // a stray reply answers no one
        #expect(gathering.asked(asker(1)) == .start)
        #expect(gathering.asked(asker(2)) == .wait && gathering.asked(asker(3)) == .wait)
        // The first gathering answers only the STATS it started for; the next starts for 2 and 3.
        var finished = gathering.finished()
        #expect(finished.answer == [asker(1)] && finished.startAnother)
        #expect(gathering.asked(asker(4)) == .wait)
        finished = gathering.finished()
        #expect(finished.answer == [asker(2), asker(3)] && finished.startAnother)
        finished = gathering.finished()
        #expect(finished.answer == [asker(4)] && !finished.startAnother)
        #expect(gathering.running == nil && gathering.waiting.isEmpty)

        // The bound: 1 running, maxWaiting waiting, then busy.
        #expect(gathering.asked(asker(0)) == .start)
        for n in 0..<StatsGathering.maxWaiting { #expect(gathering.asked(asker(n % 250)) == .wait) }
        #expect(gathering.asked(asker(9)) == .refuse)
        #expect(gathering.waiting.count == StatsGathering.maxWaiting)
    }

    /// On a real cluster: many STATS at once from many clients, each answered with the figures.
    @Test func concurrentStatsAreEachAnswered() async throws {
        try await withDeadline(.seconds(300)) {
            let test = try TestCluster(nodes: 1)
            let running = try RunningGateway(GatewayConfig(servers: test.urls, commandEndpoint: "tcp://127.0.0.1:*"))
            defer { running.stop() }
            _ = try await {
                let client = try BusClient(options: BusClientOptions(endpoint: running.gateway.commandEndpoint, requestTimeout: .seconds(30)))
                defer { client.close() }
                return try await client.publish((1...3).map { GatewayTests.event("s\($0)") })
            }()
            let clients = try (0..<8).map { _ in
                try BusClient(options: BusClientOptions(endpoint: running.gateway.commandEndpoint, requestTimeout: .seconds(30)))
            }
            defer { for client in clients { client.close() } }
            let answers = try await withThrowingTaskGroup(of: [UInt8].self) { group in
                for client in clients {
                    for _ in 0..<5 { group.addTask { try await client.stats() } }
                }
                var all: [[UInt8]] = []
                for try await answer in group { all.append(answer) }
                return all
            }
            #expect(answers.count == 40)
            for answer in answers {
                let value = try #require(try JSONSerialization.jsonObject(with: Data(answer)) as? [String: Any])
                #expect((value["stages"] as? [String: Any])?["in"] as? Int == 3)
            }
        }
    }
}
