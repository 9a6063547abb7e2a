import Foundation
import Synchronization
import Testing
import ZeroMQ
@testable import EventBus

/// A stand-in for the broker: a ROUTER on its own thread that answers a few verbs.
/// It is not the broker; it checks only what the client puts on the wire and does with replies.
final class FakeBroker: Sendable {
    let endpoint: String
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    /// Every request received, as `VERB args…` text, in order.
    let received = Mutex<[String]>([])

    /// - Parameters:
    ///   - endpoint: Where to bind (`tcp://127.0.0.1:*` for a fresh port).
    ///   - ignore: How many requests to swallow without a reply before answering.
    init(endpoint: String = "tcp://127.0.0.1:*", ignore: Int = 0) throws {
        let context = try Context()
        let router = try Socket(context: context, type: .router)
        try router.setLinger(0)
        try router.bind(endpoint)
        self.endpoint = try router.lastEndpoint
        let thread = Thread { [self] in
            var ignored = 0
            var seq: UInt64 = 0
            try? router.setReceiveTimeout(50)
            while !self.stopping.load(ordering: .acquiring) {
                guard let frames = try? router.receive(), frames.count >= 4 else { continue }
                let peer = frames[0], verb = String(decoding: frames[2], as: UTF8.self), corr = frames[3]
                self.received.withLock { $0.append(([verb] + frames.dropFirst(4).map { String(decoding: $0, as: UTF8.self) }).joined(separator: " ")) }
                if verb == "ACK" { continue }
                if ignored < ignore { ignored += 1; continue }
                let head = [peer, Array("EB1".utf8), Array("OK".utf8), corr]
                switch verb {
                case "PUB":
                    let seqs = frames.dropFirst(5).map { _ in seq += 1; return Array(String(seq).utf8) }
                    _ = try? router.send(head + seqs)
                case "CONSUME":
                    let name = frames[4]
                    _ = try? router.send(head + [Array("1".utf8)])
                    for n in 1...3 {
                        _ = try? router.send([peer, Array("EB1".utf8), Array("EVT".utf8), name, Array(String(n).utf8),
                                              Array("out/x/t".utf8), Array("{\"n\":\(n)}".utf8)])
                    }
                case "REQ":
                    _ = try? router.send([peer, Array("EB1".utf8), Array("ERR".utf8), corr, Array("not_found".utf8), Array("no channel x".utf8)])
                default:
                    _ = try? router.send(head + [Array("{}".utf8)])
                }
            }
            router.close()
            _ = context
            self.done.signal()
        }
        thread.start()
    }

    /// Stops answering and unbinds (the port is free when this returns).
    func stop() {
        stopping.store(true, ordering: .releasing)
        done.wait()
    }

    var verbs: [String] { received.withLock { $0.map { String($0.prefix { $0 != " " }) } } }
}

@Suite(.serialized) struct ClientFakeBrokerTests {
    func event(_ n: Int) -> [UInt8] { Array("{\"id\":\"\(n)\"}".utf8) }

    @Test func publishReturnsTheSeqsOfTheOKReply() async throws {
        let broker = try FakeBroker()
        defer { broker.stop() }
        let client = try BusClient(options: .init(endpoint: broker.endpoint, requestTimeout: .seconds(5)))
        defer { client.close() }
        #expect(try await client.publish([event(1), event(2)]) == [1, 2])
        #expect(try await client.publish(event(3)) == 3)
        try await client.ping()
        #expect(try await client.stats() == Array("{}".utf8))
    }

    @Test func publishAllPipelinesBatchesAndKeepsTheOrder() async throws {
        let broker = try FakeBroker()
        defer { broker.stop() }
        let client = try BusClient(options: .init(endpoint: broker.endpoint, requestTimeout: .seconds(5)))
        defer { client.close() }
        let progress = Mutex<[Int]>([])
        let seqs = try await client.publishAll((0..<1_250).map(event), batchSize: 100, window: 4) { count in
            progress.withLock { $0.append(count) }
        }
        #expect(seqs.count == 1_250)
        #expect(Set(seqs).count == 1_250)
        #expect(progress.withLock { $0.last } == 1_250)
        #expect(broker.verbs.filter { $0 == "PUB" }.count == 13)
    }

    @Test func errReplyIsThrownAsBusError() async throws {
        let broker = try FakeBroker()
        defer { broker.stop() }
        let client = try BusClient(options: .init(endpoint: broker.endpoint, requestTimeout: .seconds(5)))
        defer { client.close() }
        await #expect(throws: BusError(.notFound, "no channel x")) {
            try await client.request(service: "receipts", method: "unread", params: #"{"cid":"x"}"#)
        }
        #expect(broker.received.withLock { $0 }.contains(#"REQ receipts {"method":"unread","params":{"cid":"x"}}"#))
    }

    @Test func noBrokerFailsWithTimeoutNamingTheEndpoint() async throws {
        // A port that was just free: nothing listens there.
        let gone = try FakeBroker()
        gone.stop()
        let client = try BusClient(options: .init(endpoint: gone.endpoint, requestTimeout: .milliseconds(300)))
        defer { client.close() }
        let start = ContinuousClock.now
        let error = await #expect(throws: BusError.self) { try await client.ping() }
        #expect(error?.code == .timeout)
        #expect(error?.message.contains(gone.endpoint) == true)
        #expect(ContinuousClock.now - start < .seconds(3))
    }

    @Test func unansweredPubIsResentAfterResendAfter() async throws {
        let broker = try FakeBroker(ignore: 1)
        defer { broker.stop() }
        let client = try BusClient(options: .init(endpoint: broker.endpoint, requestTimeout: .seconds(5), resendAfter: .milliseconds(200)))
        defer { client.close() }
        #expect(try await client.publish(event(1)) == 1)
        #expect(broker.verbs == ["PUB", "PUB"])
    }

    @Test func waitingRequestIsResentWhenTheBrokerComesBack() async throws {
        let first = try FakeBroker(ignore: 1_000)
        let client = try BusClient(options: .init(endpoint: first.endpoint, requestTimeout: .seconds(8), resendAfter: .seconds(60)))
        defer { client.close() }
        async let seq = client.publish(event(1))
        try await Task.sleep(for: .milliseconds(300))
        #expect(first.verbs == ["PUB"])
        first.stop()
        let second = try FakeBroker(endpoint: first.endpoint)
        defer { second.stop() }
        #expect(try await seq == 1)
        #expect(second.verbs.first == "PUB")
    }

    @Test func durableConsumerYieldsEventsInOrderAndAcks() async throws {
        let broker = try FakeBroker()
        defer { broker.stop() }
        let client = try BusClient(options: .init(endpoint: broker.endpoint, requestTimeout: .seconds(5)))
        defer { client.close() }
        let consumer = try await client.consume(name: "t", start: .earliest, credit: 10, prefixes: ["out/"])
        #expect(consumer.firstSeq == 1)
        var seqs: [UInt64] = []
        for try await delivery in consumer {
            seqs.append(delivery.seq)
            consumer.ack(delivery.seq)
            if seqs.count == 3 { break }
        }
        #expect(seqs == [1, 2, 3])
        try await consumer.cancel()
        #expect(broker.received.withLock { $0 }.contains("CONSUME t earliest 10 out/"))
        #expect(broker.received.withLock { $0 }.contains("ACK t 3"))
    }
}
