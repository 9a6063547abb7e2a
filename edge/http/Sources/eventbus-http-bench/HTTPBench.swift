// `eventbus-http-bench`: the HTTP edge's figures for `make bench` (docs/performance.md,
// "HTTP edge"), each beside the bus's own path measured in the same run:
//   ingress  POST /v1/events with batches beside the ZeroMQ PUBS path (BusClient.publishAll)
//   fanout   one channel's events through GET /v1/stream to many clients beside a consumer of `out`
// Prints `RESULT key=value …` lines.
import ArgumentParser
import EventBus
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

@main
struct HTTPBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eventbus-http-bench", abstract: "The HTTP edge's figures beside the bus's own.",
        subcommands: [Ingress.self, Fanout.self])

    /// `count` valid `message.read` events of one channel, ids from `prefix`.
    static func events(_ count: Int, prefix: String) -> [[UInt8]] {
        (0..<count).map { n in
            Array(#"{"specversion":"1.0","id":"\#(prefix)-\#(n)","source":"/bench","type":"message.read","subject":"messaging:bench","time":"2026-11-26T08:00:00.000Z","data":{"cid":"messaging:bench","user_id":"u\#(n % 1000)","message_id":"m1"}}"#.utf8)
        }
    }

    /// Runs `body` on `count` threads of their own (blocking sockets) and returns when all ended.
    static func onThreads(_ count: Int, _ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for _ in 0..<count {
                group.enter()
                Thread {
                    body()
                    group.leave()
                }.start()
            }
            group.notify(queue: .global()) { continuation.resume() }
        }
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double { (ContinuousClock.now - start) / .seconds(1) }
}

/// POST /v1/events with batches of `--batch`, `--connections` at once, beside the same number
/// of events published with `BusClient.publishAll` (PUBS of `--batch`, `--connections` in flight).
struct Ingress: AsyncParsableCommand {
    @Option var port: Int
    @Option var command: String
    @Option var events = 100_000
    @Option var batch = 100
    @Option var connections = 8

    func run() async throws {
        let client = try BusClient(options: .init(endpoint: command, name: "http-bench"))
        defer { client.close() }
        let direct = HTTPBench.events(events, prefix: "zmq-\(getpid())")
        var start = ContinuousClock.now
        _ = try await client.publishAll(direct, batchSize: batch, window: connections)
        let zmqRate = Double(events) / HTTPBench.seconds(since: start)

        let posted = HTTPBench.events(events, prefix: "http-\(getpid())")
        let bodies = stride(from: 0, to: events, by: batch).map { first -> [UInt8] in
            let slice = posted[first..<min(events, first + batch)]
            return Array("[".utf8) + Array(slice.joined(separator: Array(",".utf8))) + Array("]".utf8)
        }
        let next = Counter()
        let failures = Counter()
        start = ContinuousClock.now
        let port = self.port
        await HTTPBench.onThreads(connections) {
            do {
                let socket = try LoopbackSocket(port: port)
                defer { socket.close() }
                while true {
                    let index = next.next()
                    guard index < bodies.count else { return }
                    let head = "POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/cloudevents-batch+json\r\n"
                        + "Content-Length: \(bodies[index].count)\r\n\r\n"
                    try socket.write(Array(head.utf8) + bodies[index])
                    if try socket.readResponse() != 200 { _ = failures.next() }
                }
            } catch {
                _ = failures.next()
            }
        }
        let httpRate = Double(events) / HTTPBench.seconds(since: start)
        guard failures.value == 0 else { throw BenchError("\(failures.value) POSTs were not answered 200") }
        print(String(format: "RESULT mode=http_ingress zmq_pubs_events_per_s=%.0f http_post_events_per_s=%.0f http_ratio=%.3f",
                     zmqRate, httpRate, httpRate / zmqRate))
    }
}

/// A shared counter for the bench's threads.
final class Counter: Sendable {
    private let atomic = Atomic(0)

    /// The value before adding one.
    func next() -> Int { atomic.add(1, ordering: .relaxed).oldValue }

    var value: Int { atomic.load(ordering: .relaxed) }
}
