import Dispatch
import Foundation
import NATS

/// JetStream by itself, the yardstick of the bus on a cluster (issue 17): COUNT events of
/// the bench's ~300 bytes published to a stream of its own (3 replicas with three servers
/// or more, else 1; each with a `Nats-Msg-Id`, as the gateway sends them), WINDOW
/// publishes awaiting their acks at most, while a durable pull consumer fetches and acks
/// them on a thread of its own. Events/s from the first publish to the last event
/// fetched, and the publish-ack rate. The stream is deleted at the end.
func jetStreamRaw(urls: [String], count: Int, window: Int) throws {
    let connection = try Connection(ConnectOptions(servers: urls, name: "eventbus-bench", timeout: .seconds(5), allowReconnect: false))
    defer { connection.close() }
    let jetStream = try JetStream(connection: connection, options: JetStreamOptions(
        requestTimeout: .seconds(10), asyncAckTimeout: .seconds(30), maxPendingAsync: window * 2))
    let name = "BENCH_RAW_\(runTag)"
    let subject = "bench.raw.\(runTag)"
    let replicas = urls.count >= 3 ? 3 : 1
    _ = try jetStream.addStream(StreamConfig(name: name, subjects: [subject], storage: .file, replicas: replicas))
    defer { try? jetStream.deleteStream(name) }
    let consumer = try jetStream.pullConsumer(PullConsumerConfig(stream: name, durable: "bench", maxAckPending: -1))

    let received = Atomic(0)
    let consumed = DispatchSemaphore(value: 0)
    let reader = Thread {
        var seen = 0
        while seen < count {
            guard let messages = try? consumer.fetch(batch: 1_000, timeout: .seconds(5)) else { continue }
            for message in messages { try? message.ack() }
            seen += messages.count
            received.set(seen)
        }
        consumed.signal()
    }
    reader.start()

    let slots = DispatchSemaphore(value: window)
    let failures = Atomic(0)
    let acked = DispatchSemaphore(value: 0)
    let started = now()
    for n in 0..<count {
        slots.wait()
        jetStream.publishAsync(subject, event(n), messageID: "in/%2Fbench%2Fpublisher/bench-\(n)-\(runTag)") { result in
            if case .failure = result { failures.set(failures.get() + 1) }
            slots.signal()
            acked.signal()
        }
    }
    for _ in 0..<count { acked.wait() }
    let publishedIn = Double(now() - started) / 1e9
    guard consumed.wait(timeout: .now() + .seconds(120)) == .success else {
        throw ProcessError("the consumer got \(received.get()) of \(count) events within 120 s")
    }
    let seconds = Double(now() - started) / 1e9
    print("RESULT mode=jetstream replicas=\(replicas) events=\(count) failures=\(failures.get()) "
        + "events_per_s=\(Int(Double(count) / seconds)) publish_per_s=\(Int(Double(count) / publishedIn))")
}
