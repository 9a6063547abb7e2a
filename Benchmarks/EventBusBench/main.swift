// Load generator for `make bench`: drives a running broker over the wire and
// prints one `RESULT key=value …` line per measurement (Benchmarks/run.sh
// puts them beside raw libzmq figures from the same run).
//
// With EVENTBUS_SECRET_KEY and EVENTBUS_SERVER_KEY set, every socket uses CURVE.
//
//   eventbus-bench throughput COMMAND_EP COUNT BATCH WINDOW [STAGE]
//       PUB COUNT events in batches of BATCH with WINDOW PUBs in flight while a
//       durable consumer reads them back; events/s from the first PUB sent to
//       the last EVT received, and the publish-confirm rate.
//   eventbus-bench latency COMMAND_EP RATE SECONDS
//       one-event PUBs at RATE per second; confirm latency percentiles.
//   eventbus-bench reducer COMMAND_EP ACKS BATCH WINDOW [RATE | threads]
//       a group chat (1,000 members) then ACKS read acks that each move a
//       watermark, through the receipt reducer; acks/s until every ack's
//       `message.read` reached `out`, or, with RATE, ack-to-`out` latency.
//       `threads`: the same chat with a tenth of its members muted and a
//       thread reply after every fourth message (20 % of the messages).
//   eventbus-bench workload COUNT SEED FILE
//       writes COUNT lines of a realistic chat workload for stage `in` (NDJSON,
//       setup then traffic; Benchmarks/ChatWorkload has the mix), the same for a seed.
//   eventbus-bench drain COMMAND_EP [TIMEOUT_S]
//       polls STATS until every durable consumer has caught up with the log.
//   eventbus-bench jetstream NATS_URLS COUNT WINDOW
//       JetStream alone (JetStreamRaw.swift): COUNT events published to a stream of
//       its own and read back by a pull consumer; the yardstick of the bus on a cluster.
import EventBus
import Foundation
import ZeroMQ

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Makes this run's event ids unlike any earlier run's, once (a UUID per event made setup slow).
let runTag = UUID().uuidString.prefix(8)

func event(_ n: Int) -> [UInt8] {
    // ~300 bytes, like a real message.read from a chat backend.
    Array(#"{"specversion":"1.0","id":"bench-\#(n)-\#(runTag)","source":"/bench/publisher","type":"message.read","time":"2026-11-22T03:10:00.123Z","subject":"messaging:general","data":{"cid":"messaging:general","user_id":"user-\#(n % 1000)","message_id":"msg-\#(n)","read_at":"2026-11-22T03:10:00.123Z"}}"#.utf8)
}

/// CURVE keys from EVENTBUS_SECRET_KEY and EVENTBUS_SERVER_KEY, for a broker with `--security`.
let curveKeys: (keys: CurveKeyPair, server: String)? = {
    guard let secret = ProcessInfo.processInfo.environment["EVENTBUS_SECRET_KEY"],
          let server = ProcessInfo.processInfo.environment["EVENTBUS_SERVER_KEY"],
          let keys = try? CurveKeyPair(secretKey: secret) else { return nil }
    return (keys, server)
}()

func dealer(_ context: Context, _ endpoint: String) throws -> Socket {
    let socket = try Socket(context: context, type: .dealer)
    if let curveKeys { try socket.makeCurveClient(keys: curveKeys.keys, serverKey: curveKeys.server) }
    try socket.setLinger(0)
    try socket.setSendHighWaterMark(0)
    try socket.setReceiveHighWaterMark(0)
    try socket.connect(endpoint)
    return socket
}

func frames(_ verb: String, _ corr: String, _ args: [[UInt8]]) -> [[UInt8]] {
    [Array("EB1".utf8), Array(verb.utf8), Array(corr.utf8)] + args
}

/// Asks for batched delivery (`EVTS`) on this connection, as the plugin runner does.
func helloBatched(_ socket: Socket) throws {
    try socket.send(frames("HELLO", "h", [Array(#"{"name":"eventbus-bench","role":"bench","version":"1","batch":true}"#.utf8)]))
    guard let ok = try socket.receive(), ok.count == 4, ok[1] == Array("OK".utf8) else {
        throw ProcessError("HELLO refused")
    }
}

/// Asks for a PUB's OK in one frame (`compact_ok`) on this connection: a publisher that
/// counts its confirms has one frame to read, and the broker one to write, per PUB.
func helloCompact(_ socket: Socket) throws {
    try socket.send(frames("HELLO", "h", [Array(#"{"name":"eventbus-bench","role":"bench","version":"1","compact_ok":true}"#.utf8)]))
    guard let ok = try socket.receive(), ok.count == 4, ok[1] == Array("OK".utf8) else {
        throw ProcessError("HELLO refused")
    }
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

/// Sends `events` to `stage` as a client of ours does: a batch as one PUBS (one BATCH frame; the
/// broker lists `pubs` in HELLO), one event as a PUB.
func sendBatch(_ events: ArraySlice<[UInt8]>, to stage: String, through publisher: Socket, correlation: String) throws {
    if events.count > 1 {
        try publisher.send(frames("PUBS", correlation, [Array(stage.utf8), PublishBatch.encode(events)]))
    } else {
        try publisher.send(frames("PUB", correlation, [Array(stage.utf8)] + events))
    }
}

/// Reads one PUB's confirm in place and returns how many SEQs it holds: all in one frame after
/// HELLO's `compact_ok`, or one frame each. Copies nothing unless it is an ERR, which it throws.
func receiveConfirm(_ publisher: Socket) throws -> Int {
    var isOK = false
    var seqs = 0
    var refusal: [String] = []
    guard let frameCount = try publisher.receive(visiting: { index, bytes in
        if index == 1 { isOK = bytes.elementsEqual("OK".utf8) }
        if index >= 3 && isOK { seqs += 1 + bytes.reduce(0) { $0 + ($1 == UInt8(ascii: " ") ? 1 : 0) } }
        if index >= 3 && !isOK { refusal.append(String(decoding: bytes, as: UTF8.self)) }
    }) else { throw ProcessError("no confirm within the receive timeout") }
    guard frameCount >= 4, isOK else { throw ProcessError("PUB refused: \(refusal)") }
    return seqs
}

func throughput(endpoint: String, count: Int, batch: Int, window: Int, stage: String, consumePrefix: String) throws {
    let context = try Context()
    let consumerName = "bench-\(UUID().uuidString.prefix(8).lowercased())"
    let consumer = try dealer(context, endpoint)
    try consumer.setReceiveTimeout(30_000)
    try helloBatched(consumer)
    try consumer.send(frames("CONSUME", "c", [Array(consumerName.utf8), Array("latest".utf8), Array("20000".utf8), Array(consumePrefix.utf8)]))
    guard let ok = try consumer.receive(), ok.count == 4, ok[1] == Array("OK".utf8) else {
        throw ProcessError("CONSUME refused")
    }
    let firstSeq = UInt64(String(decoding: ok[3], as: UTF8.self)) ?? 0

    let events = (0..<count).map(event)
    let publisher = try dealer(context, endpoint)
    try publisher.setReceiveTimeout(30_000)
    try helloCompact(publisher)
    let start = now()
    let received = Atomic(0)
    let consumerThread = Thread {
        // Reads each EVTS batch in place, keeping only its last SEQ, like the C
        // baselines that copy nothing: the driver should leave the CPU to the broker.
        // One EVT per event from a front that offers no batched delivery (the JetStream gateway).
        var seen = 0
        var lastAck = 0
        var lastSeq: UInt64 = 0
        var single = false
        while seen < count, let total = try? consumer.receive(visiting: { index, bytes in
            if index == 1 { single = bytes.count == 3 }  // EVT, not EVTS
            guard index == 3 else { return }
            if single {
                var seq: UInt64 = 0
                for byte in bytes { seq = seq * 10 + UInt64(byte &- 0x30) }
                seen += 1
                lastSeq = seq
            } else {
                DeliveryBatch.decode(bytes) { seq, _, _ in
                    seen += 1
                    lastSeq = seq
                }
            }
        }) {
            guard total == 4 || total == 6 else { continue }
            if seen - lastAck >= 5_000 || seen >= count {
                _ = try? consumer.send(frames("ACK", "a", [Array(consumerName.utf8), Array(String(lastSeq).utf8)]))
                lastAck = seen
            }
        }
        received.set(seen)
    }
    consumerThread.start()

    var sent = 0, confirmed = 0, outstanding = 0, pubs = 0
    while confirmed < count {
        while outstanding < window && sent < count {
            let end = min(count, sent + batch)
            try sendBatch(events[sent..<end], to: stage, through: publisher, correlation: "\(pubs)")
            pubs += 1
            outstanding += 1
            sent = end
        }
        confirmed += try receiveConfirm(publisher)
        outstanding -= 1
    }
    let confirmedAt = now()
    while received.get() < count && now() - confirmedAt < 60_000_000_000 { Thread.sleep(forTimeInterval: 0.0005) }
    let end = now()
    let seconds = Double(end - start) / 1e9
    let confirmSeconds = Double(confirmedAt - start) / 1e9
    print("RESULT mode=throughput batch=\(batch) window=\(window) events=\(count) first_seq=\(firstSeq) "
        + "received=\(received.get()) seconds=\(String(format: "%.3f", seconds)) "
        + "events_per_s=\(Int(Double(received.get()) / seconds)) confirm_events_per_s=\(Int(Double(count) / confirmSeconds))")
    consumer.close()
    publisher.close()
}

func latency(endpoint: String, rate: Int, seconds: Double) throws {
    let context = try Context()
    let publisher = try dealer(context, endpoint)
    let total = Int(Double(rate) * seconds)
    let events = (0..<total).map(event)
    let interval = 1e9 / Double(rate)
    var sentAt = [UInt64](repeating: 0, count: total)
    var latencies: [Double] = []
    latencies.reserveCapacity(total)
    var poller = Poller()
    poller.add(publisher)
    let start = now()
    var next = 0
    // Send what is due, then wait for confirms up to 1 ms: no busy loop, so the
    // driver does not take a core from the broker on this 2-core machine.
    while latencies.count < total {
        while next < total && now() >= start + UInt64(Double(next) * interval) {
            sentAt[next] = now()
            try publisher.send(frames("PUB", "\(next)", [Array("in".utf8), events[next]]))
            next += 1
        }
        if try poller.poll(timeoutMilliseconds: 1)[0].contains(.readable) {
            while let reply = try publisher.receive(dontWait: true) {
                let index = Int(String(decoding: reply[2], as: UTF8.self)) ?? 0
                latencies.append(Double(now() - sentAt[index]) / 1_000)
            }
        } else if next >= total && now() - start > UInt64((seconds + 30) * 1e9) {
            throw ProcessError("confirms missing")
        }
    }
    latencies.sort()
    print("RESULT mode=latency rate=\(rate) events=\(total) p50_us=\(Int(percentile(latencies, 0.5))) "
        + "p99_us=\(Int(percentile(latencies, 0.99))) max_us=\(Int(latencies.last ?? 0))")
    publisher.close()
}

final class Atomic: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int
    init(_ value: Int) { self.value = value }
    func get() -> Int { lock.withLock { value } }
    func set(_ newValue: Int) { lock.withLock { value = newValue } }
}

struct ProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

let arguments = CommandLine.arguments
do {
    switch arguments.count > 1 ? arguments[1] : "" {
    case "throughput" where arguments.count >= 6:
        let stage = arguments.count > 6 ? arguments[6] : "in"
        try throughput(endpoint: arguments[2], count: Int(arguments[3]) ?? 100_000, batch: Int(arguments[4]) ?? 100,
                       window: Int(arguments[5]) ?? 16, stage: stage, consumePrefix: arguments.count > 7 ? arguments[7] : "\(stage)/")
    case "reducer" where arguments.count >= 6:
        // `reducer EP ACKS BATCH WINDOW [RATE|threads]`: threads is the channel with threads and mutes.
        let threads = arguments.count > 6 && arguments[6] == "threads"
        try reducer(endpoint: arguments[2], acks: Int(arguments[3]) ?? 100_000, batch: Int(arguments[4]) ?? 100,
                    window: Int(arguments[5]) ?? 16, rate: arguments.count > 6 && !threads ? Int(arguments[6]) : nil, threads: threads)
    case "workload" where arguments.count >= 5:
        try workload(count: Int(arguments[2]) ?? 1_000_000, seed: UInt64(arguments[3]) ?? 1, path: arguments[4])
    case "drain" where arguments.count >= 3:
        try drain(endpoint: arguments[2], timeout: arguments.count > 3 ? Double(arguments[3]) ?? 600 : 600)
    case "latency" where arguments.count >= 5:
        try latency(endpoint: arguments[2], rate: Int(arguments[3]) ?? 10_000, seconds: Double(arguments[4]) ?? 5)
    case "jetstream" where arguments.count >= 5:
        try jetStreamRaw(urls: arguments[2].split(separator: ",").map(String.init), count: Int(arguments[3]) ?? 100_000,
                         window: Int(arguments[4]) ?? 1_000)
    default:
        FileHandle.standardError.write(Data("usage: eventbus-bench throughput EP COUNT BATCH WINDOW [STAGE [PREFIX]] | latency EP RATE SECONDS | reducer EP ACKS BATCH WINDOW [RATE|threads] | workload COUNT SEED FILE | drain EP [TIMEOUT_S] | jetstream URLS COUNT WINDOW\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("eventbus-bench: \(error)\n".utf8))
    exit(1)
}
