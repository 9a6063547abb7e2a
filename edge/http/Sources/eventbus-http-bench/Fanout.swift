import ArgumentParser
import EventBus
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One channel's events through `GET /v1/stream` to `--clients` clients at once (each its own
/// durable consumer, as an app's would be), beside one `BusClient` consumer of `out` reading
/// the same number of events: deliveries per second over all clients, and each client's rate.
struct Fanout: AsyncParsableCommand {
    @Option var port: Int
    @Option var command: String
    @Option var clients = 1_000
    @Option var events = 2_000

    /// `count` `message.new` events of one channel, as the pipeline writes them to `out`.
    static func messages(_ count: Int, prefix: String) -> [[UInt8]] {
        (0..<count).map { n in
            Array(#"{"specversion":"1.0","id":"\#(prefix)-\#(n)","source":"/bench","type":"message.new","subject":"messaging:fanout","time":"2026-11-26T08:00:00.000Z","data":{"cid":"messaging:fanout","message":{"id":"\#(prefix)-\#(n)","user_id":"ann","created_at":"2026-11-26T08:00:00.000Z"}}}"#.utf8)
        }
    }

    func run() async throws {
        let client = try BusClient(options: .init(endpoint: command, name: "http-bench-fanout"))
        defer { client.close() }

        // The bus's own rate: one durable consumer of `out` reading `events` events as they are published.
        let own = try await client.consume(name: "http-bench-\(getpid())", start: .latest, credit: 1_000, prefixes: ["out/"])
        var start = ContinuousClock.now
        async let published = client.publishAll(Self.messages(events, prefix: "own-\(getpid())"), stage: "out", batchSize: 100)
        var read = 0
        for try await delivery in own {
            read += 1
            own.ack(delivery.seq)
            if read == events { break }
        }
        _ = try await published
        let ownRate = Double(events) / HTTPBench.seconds(since: start)
        try await own.cancel()

        // The clients: each opens the stream from now and waits for its first comment.
        var streams = try (0..<clients).map { _ in try StreamReader(port: port) }
        defer { for stream in streams { stream.socket.close() } }
        try StreamReader.pollAll(&streams, timeout: .seconds(60)) { $0.opened }
        start = ContinuousClock.now
        async let sent = client.publishAll(Self.messages(events, prefix: "fan-\(getpid())"), stage: "out", batchSize: 100)
        try StreamReader.pollAll(&streams, timeout: .seconds(300)) { $0.events >= events }
        let seconds = HTTPBench.seconds(since: start)
        _ = try await sent
        let deliveries = Double(clients * events) / seconds
        print(String(format: "RESULT mode=http_fanout clients=%d events=%d sse_deliveries_per_s=%.0f sse_per_client_events_per_s=%.0f "
            + "out_consumer_events_per_s=%.0f", clients, events, deliveries, Double(events) / seconds, ownRate))
    }
}

/// One SSE client: its socket and what it has read, counted by `id:` lines.
struct StreamReader {
    let socket: LoopbackSocket
    var opened = false
    var events = 0
    private var atLineStart = true
    private var matched = 0

    init(port: Int) throws(BenchError) {
        socket = try LoopbackSocket(port: port)
        try socket.write(Array("GET /v1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".utf8))
        _ = fcntl(socket.fd, F_SETFL, fcntl(socket.fd, F_GETFL) | O_NONBLOCK)
    }

    /// Counts the lines that start with `id: ` in `bytes`; the first `: eventbus stream` comment opens it.
    mutating func take(_ bytes: ArraySlice<UInt8>) {
        let prefix = Array("id: ".utf8)
        if !opened, String(decoding: bytes, as: UTF8.self).contains(": eventbus stream") { opened = true }
        for byte in bytes {
            if byte == 10 {
                atLineStart = true
                matched = 0
                continue
            }
            if atLineStart {
                if byte == prefix[matched] {
                    matched += 1
                    if matched == prefix.count {
                        events += 1
                        atLineStart = false
                    }
                } else {
                    atLineStart = false
                }
            }
        }
    }

    /// Reads every stream as data comes until `done` holds for all of them.
    static func pollAll(_ streams: inout [StreamReader], timeout: Duration, until done: (StreamReader) -> Bool) throws(BenchError) {
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !streams.allSatisfy(done) {
            guard ContinuousClock.now < deadline else {
                throw BenchError("\(streams.filter { !done($0) }.count) of \(streams.count) streams not there in \(timeout)")
            }
            var fds = streams.map { pollfd(fd: $0.socket.fd, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), 100) >= 0 else { throw BenchError("poll: errno \(errno)") }
            for index in fds.indices where fds[index].revents != 0 {
                while true {
                    let n = buffer.withUnsafeMutableBytes { recv(fds[index].fd, $0.baseAddress, $0.count, 0) }
                    if n <= 0 { break }
                    streams[index].take(buffer[0..<n])
                }
            }
        }
    }
}
