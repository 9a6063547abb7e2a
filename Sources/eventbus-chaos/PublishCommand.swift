import ArgumentParser
import EventBus
import Foundation
import Logging

/// `eventbus-chaos publish`: one publisher process of a round. It sends its share of the
/// workload to `in` in batches, a few in flight, and records each confirm. As a real backend
/// would, it sends a batch again, with the same events and ids, after any error, timeout or
/// reconnect, until it is confirmed; started again after a SIGKILL, it sends every line of its
/// share whose confirm it has not recorded. It keeps a pace (`--rate`), so that the round's
/// fault finds it publishing.
struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "publish", abstract: "One publisher of a round (started by the campaign).")

    @Option var endpoint: String
    @Option var seed: UInt64
    @Option var count: Int
    @Option var index: Int
    @Option var publishers: Int
    @Option var confirms: String
    @Option(help: "Where to append each batch's confirm latency in µs, from its first send to its confirm, retries included.")
    var latencies: String?
    @Option var batch = 25
    @Option var window = 4
    @Option(help: "Events per second at most, as a backend's steady traffic (0: as fast as confirmed).")
    var rate = 1_000

    func run() async throws {
        let share = try PublisherShare(count: count, seed: seed)
        let file = ConfirmFile(path: confirms)
        let done = Set(file.read().map(\.line))
        let todo = share.indices(of: index, among: publishers).filter { !done.contains($0) }
        let batches = stride(from: 0, to: todo.count, by: batch).map { Array(todo[$0..<min(todo.count, $0 + batch)]) }
        let logger = Logger(label: "eventbus.chaos.publisher")
        let client = try BusClient(options: .init(endpoint: endpoint, name: "chaos-publisher-\(index)",
                                                  requestTimeout: .seconds(5), resendAfter: .seconds(1)), logger: logger)
        defer { client.close() }
        let appender = try file.appender()
        defer { try? appender.close() }
        let latencyFile = try latencies.map { path in
            // Appended to across restarts of this publisher.
            if !FileManager.default.fileExists(atPath: path) { FileManager.default.createFile(atPath: path, contents: nil) }
            return try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        }
        defer { try? latencyFile?.close() }
        try await withThrowingTaskGroup(of: (lines: [String], micros: Int).self) { group in
            var next = 0
            let started = ContinuousClock.now
            func startNext() {
                guard next < batches.count else { return }
                let due = rate > 0 ? started + .milliseconds(next * batch * 1_000 / rate) : started
                let lines = batches[next]
                next += 1
                group.addTask {
                    try await Task.sleep(until: due)  // the publisher's pace
                    let sent = ContinuousClock.now
                    let confirmed = try await Self.publishUntilConfirmed(lines, share.lines, client, logger)
                    return (confirmed, Int((ContinuousClock.now - sent) / .microseconds(1)))
                }
            }
            for _ in 0..<window { startNext() }
            while let confirmed = try await group.next() {
                try appender.write(contentsOf: Data(confirmed.lines.joined().utf8))
                try latencyFile?.seekToEnd()
                try latencyFile?.write(contentsOf: Data("\(confirmed.micros)\n".utf8))
                startNext()
            }
        }
    }

    /// Publishes the lines as one batch until the broker confirms it; one `<line> <SEQ>\n` per event.
    static func publishUntilConfirmed(_ indices: [Int], _ lines: [[UInt8]], _ client: BusClient, _ logger: Logger) async throws -> [String] {
        while true {
            do {
                let seqs = try await client.publish(indices.map { lines[$0] })
                return zip(indices, seqs).map { "\($0) \($1)\n" }
            } catch {
                logger.info("publish failed, sending the same events again", metadata: ["error": "\(error)"])
                try await Task.sleep(for: .milliseconds(100))  // a retry's pause
            }
        }
    }
}
