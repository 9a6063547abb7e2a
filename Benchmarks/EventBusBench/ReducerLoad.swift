import EventBus
import Foundation
import ZeroMQ

/// The reducer workload: `members` users in one channel, then acks that each move
/// a read watermark forward (member `i % members` reads message `i / members`).
///
/// With `threads` (issue 18's shape of a real channel), every tenth member muted the
/// channel and every fourth message has a thread reply after it (20 % of the messages
/// are replies), sent by a member, who takes part in that thread with the parent's author;
/// the acks read the channel's messages as before, past the replies.
struct ReducerLoad {
    var cid: String { "messaging:bench-\(run.lowercased())" }
    let members: Int
    let acks: Int
    var threads = false
    /// Makes this run's event ids unique, so a second run on the same bus is not deduplicated away.
    let run = UUID().uuidString.prefix(8)

    var messageCount: Int { (acks + members - 1) / members + 1 }

    func setup() -> [[UInt8]] {
        let list = (0..<members).map { "\"u\($0)\"" }.joined(separator: ",")
        var events = [envelope("setup-c", "channel.created", #"{"cid":"\#(cid)","members":[\#(list)]}"#)]
        if threads {
            for u in stride(from: 0, to: members, by: 10) {
                events.append(envelope("setup-mute\(u)", "member.updated", #"{"cid":"\#(cid)","user_id":"u\#(u)","muted":true}"#))
            }
        }
        for n in 0..<messageCount {
            // Sent by a bot that is not a member: it counts for everyone and moves no watermark.
            events.append(envelope("setup-m\(n)", "message.new",
                                   #"{"cid":"\#(cid)","message":{"id":"m\#(n)","user_id":"bot","created_at":"2026-11-22T03:10:00.123Z"}}"#))
            if threads && n % 4 == 3 {
                events.append(envelope("setup-r\(n)", "message.new", #"""
                    {"cid":"\#(cid)","message":{"id":"r\#(n)","user_id":"u\#(n % members)","created_at":"2026-11-22T03:10:00.123Z","parent_id":"m\#(n)"}}
                    """#))
            }
        }
        return events
    }

    func ack(_ i: Int) -> [UInt8] {
        envelope("ack-\(i)", "message.read", #"{"cid":"\#(cid)","user_id":"u\#(i % members)","message_id":"m\#(i / members)"}"#)
    }

    /// The ack index a `message.read` output stands for, read in place from its bytes
    /// (no copy: the load generator shares the machine with what it measures).
    func index(ofOutput event: UnsafeRawBufferPointer) -> Int? {
        guard let user = number(after: Self.userMarker, in: event),
              let message = number(after: Self.messageMarker, in: event) else { return nil }
        return message * members + user
    }

    private static let userMarker = Array(#""user_id":"u"#.utf8)
    private static let messageMarker = Array(#""last_read_message_id":"m"#.utf8)

    /// The decimal after the first `marker` in `bytes`, found by ``ByteRun/firstOffset(of:in:)``
    /// (a word at a time: a byte-by-byte search calling `memcmp` at every quote was an eighth
    /// of this process's CPU).
    private func number(after marker: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let at = marker.withUnsafeBytes({ ByteRun.firstOffset(of: $0, in: bytes) }) else { return nil }
        var index = at + marker.count, value = 0
        while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
            value = value * 10 + Int(bytes[index] - 48)
            index += 1
        }
        return value
    }

    private func envelope(_ id: String, _ type: String, _ data: String) -> [UInt8] {
        Array(#"{"specversion":"1.0","id":"\#(run)-\#(id)","source":"/bench/backend","type":"\#(type)","subject":"\#(cid)","time":"2026-11-22T03:10:00.123Z","data":\#(data)}"#.utf8)
    }
}

/// Acks through broker + receipt reducer: throughput (no RATE) or ack-to-`out` latency at RATE.
func reducer(endpoint: String, acks: Int, batch: Int, window: Int, rate: Int?, threads: Bool = false) throws {
    let load = ReducerLoad(members: 1_000, acks: acks, threads: threads)
    let context = try Context()
    let publisher = try dealer(context, endpoint)
    try publisher.setReceiveTimeout(60_000)
    func publishConfirmed(_ events: [[UInt8]]) throws {
        for start in stride(from: 0, to: events.count, by: 500) {
            try publisher.send(frames("PUB", "s", [Array("in".utf8)] + events[start..<min(events.count, start + 500)]))
            guard let reply = try publisher.receive(), reply[1] == Array("OK".utf8) else { throw ProcessError("setup refused") }
        }
    }
    try publishConfirmed(load.setup())

    let consumerName = "bench-\(UUID().uuidString.prefix(8).lowercased())"
    let consumer = try dealer(context, endpoint)
    try consumer.setReceiveTimeout(60_000)
    try helloBatched(consumer)
    try consumer.send(frames("CONSUME", "c", [Array(consumerName.utf8), Array("latest".utf8), Array("20000".utf8), Array("out/\(load.cid)/message.read".utf8)]))
    guard let ok = try consumer.receive(), ok[1] == Array("OK".utf8) else { throw ProcessError("CONSUME refused") }

    var sentAt = [UInt64](repeating: 0, count: acks)
    var arrivedAt = [UInt64](repeating: 0, count: acks)
    let done = DispatchSemaphore(value: 0)
    let received = Atomic(0)
    nonisolated(unsafe) var arrivals = arrivedAt
    Thread {
        var seen = 0, lastAck = 0
        while seen < acks, let message = try? consumer.receive() {
            // EVTS: NAME, then one BATCH frame; or one EVT per event (NAME SEQ TOPIC EVENT)
            // from a front without batched delivery (the JetStream gateway).
            let arrived = now()
            var lastSeq: UInt64 = 0
            func arrivedOutput(_ seq: UInt64, _ event: UnsafeRawBufferPointer) {
                lastSeq = seq
                if let index = load.index(ofOutput: event), index < acks, arrivals[index] == 0 {
                    arrivals[index] = arrived
                    seen += 1
                }
            }
            if message.count == 4, message[1] == Array("EVTS".utf8) {
                DeliveryBatch.decode(message[3]) { seq, _, event in arrivedOutput(seq, event) }
            } else if message.count == 6, message[1] == Array("EVT".utf8), let seq = UInt64(String(decoding: message[3], as: UTF8.self)) {
                message[5].withUnsafeBytes { arrivedOutput(seq, $0) }
            } else {
                continue
            }
            if seen - lastAck >= 2_000 || seen == acks {
                _ = try? consumer.send(frames("ACK", "a", [Array(consumerName.utf8), Array(String(lastSeq).utf8)]))
                lastAck = seen
            }
        }
        received.set(seen)
        done.signal()
    }.start()

    let events = (0..<acks).map(load.ack)
    let start = now()
    if let rate {
        // One ack per PUB at a steady rate; confirms are read as they come.
        var poller = Poller()
        poller.add(publisher)
        let interval = 1e9 / Double(rate)
        var next = 0, confirmed = 0
        while confirmed < acks {
            while next < acks && now() >= start + UInt64(Double(next) * interval) {
                sentAt[next] = now()
                try publisher.send(frames("PUB", "p", [Array("in".utf8), events[next]]))
                next += 1
            }
            if try poller.poll(timeoutMilliseconds: 1)[0].contains(.readable) {
                while try publisher.receive(dontWait: true) != nil { confirmed += 1 }
            }
        }
    } else {
        // As a backend's client sends them (BusClient, the plugin SDK): its confirms in one frame.
        try helloCompact(publisher)
        var sent = 0, confirmed = 0, outstanding = 0
        while confirmed < acks {
            while outstanding < window && sent < acks {
                let end = min(acks, sent + batch)
                for i in sent..<end { sentAt[i] = now() }
                try sendBatch(events[sent..<end], to: "in", through: publisher, correlation: "p")
                outstanding += 1
                sent = end
            }
            confirmed += try receiveConfirm(publisher)
            outstanding -= 1
        }
    }
    guard done.wait(timeout: .now() + 120) == .success else { throw ProcessError("outputs missing: \(received.get()) of \(acks)") }
    arrivedAt = arrivals
    let end = arrivedAt.max() ?? now()
    let latencies = zip(sentAt, arrivedAt).filter { $1 >= $0 }.map { Double($1 - $0) / 1_000 }.sorted()
    guard latencies.count == acks else { throw ProcessError("outputs missing: \(latencies.count) of \(acks)") }
    let seconds = Double(end - start) / 1e9
    print("RESULT mode=reducer acks=\(acks) rate=\(rate.map(String.init) ?? "max") seconds=\(String(format: "%.3f", seconds)) "
        + "acks_per_s=\(Int(Double(acks) / seconds)) p50_us=\(Int(percentile(latencies, 0.5))) p99_us=\(Int(percentile(latencies, 0.99)))")
    publisher.close()
    consumer.close()
}
