// In-process figures of the receipt reducer for `make bench`:
//   - message_receipts and unread_counts latency in a channel of 100,000 members
//   - resident memory per (channel, member) state and per retained message
//   - the CPU of one ack on the plugin's path, in process: event bytes → typed payload → fold →
//     output events (what `receipt-reducer` does per ack, without the broker and its I/O)
// Prints `RESULT key=value …` lines; Benchmarks/run.sh tabulates them. With the argument
// `memory` only the memory figures (a test checks them against their budgets); with `path [ACKS]`
// only the ack path's figures (300,000 acks unless told).
import EventBus
import Foundation
import ReceiptReducer

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func median(_ samples: [Double]) -> Double { samples.sorted()[samples.count / 2] }

/// Resident set size in bytes (Linux /proc/self/statm).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
}

let time = "2026-11-22T03:10:00.123Z"

/// The ack path in process: `acks` read acks (member `i % 1,000` reads message `i / 1,000`, the
/// shape of `eventbus-bench reducer`) as logged events of `in`, each read into its typed payload,
/// folded, and its outputs written as events, in batches of 100 as the plugin runtime hands them
/// over. The median of three passes, each on a fresh reducer; then the broker's check of each
/// output event (`EventValidator.envelopeSpans` at `out`), the fastest of five passes over them
/// (the one least disturbed by other work on the machine: the check itself does the same each time).
func ackPath(acks: Int = 300_000) -> (perAck: Double, checkPerOutput: Double) {
    let members = 1_000, cid = "messaging:bench-path"
    func event(_ id: String, _ type: String, _ data: String) -> [UInt8] {
        Array(#"{"specversion":"1.0","id":"\#(id)","source":"/bench/backend","type":"\#(type)","subject":"\#(cid)","time":"\#(time)","data":\#(data)}"#.utf8)
    }
    let frames = (0..<acks).map { i in
        event("ack-\(i)", "message.read", #"{"cid":"\#(cid)","user_id":"u\#(i % members)","message_id":"m\#(i / members)"}"#)
    }
    let topic = "in/\(cid)/message.read"
    var samples: [Double] = []
    var outputs: [[UInt8]] = []
    for _ in 0..<3 {
        var reducer = ReceiptReducer()
        var seq: UInt64 = 0
        func fold(_ payload: IngressPayload) {
            seq += 1
            _ = reducer.apply(ReducerInput(seq: seq, time: time, payload: payload))
        }
        fold(.channelCreated(cid: cid, members: (0..<members).map { "u\($0)" }))
        for n in 0...(acks / members) {
            fold(.messageNew(cid: cid, message: NewMessage(id: "m\(n)", userID: "bot", createdAt: time)))
        }
        var output = PluginOutput(plugin: "receipt-reducer")
        var written = 0
        let start = now()
        for (offset, bytes) in frames.enumerated() {
            seq += 1
            let logged = PluginEvent(seq: seq, topic: topic, bytes: bytes)
            output.begin(seq)
            guard let (_, eventTime, payload) = try? logged.ingressPayload() else { fatalError("ack \(offset) refused") }
            for produced in reducer.apply(ReducerInput(seq: seq, time: eventTime, payload: payload)) {
                output.emit(type: produced.type, subject: produced.subject, data: produced.data, time: eventTime,
                            to: produced.stage == Stage.diag ? .diag : .next)
            }
            if offset % 100 == 99 {
                written += output.outgoing.count
                if outputs.count < acks { outputs += output.outgoing.map(\.bytes) }
                output.removeAll()
            }
        }
        samples.append(Double(now() - start) / 1_000 / Double(acks))
        precondition(written >= acks, "the fold wrote \(written) events for \(acks) acks")
    }
    var checks: [Double] = []
    for _ in 0..<5 {
        var checked = 0
        let start = now()
        for bytes in outputs where bytes.withUnsafeBytes({ EventValidator.envelopeSpans($0, stage: Stage.out) }) != nil {
            checked += 1
        }
        checks.append(Double(now() - start) / Double(outputs.count))
        precondition(checked == outputs.count, "the broker's check refused \(outputs.count - checked) outputs")
    }
    return (median(samples), checks.min() ?? 0)
}

func printAckPath(acks: Int = 300_000) {
    let path = ackPath(acks: acks)
    print("RESULT mode=path ack_path_us=\(String(format: "%.2f", path.perAck)) output_check_ns=\(Int(path.checkPerOutput))")
}

func runBench() throws {
    if CommandLine.arguments.dropFirst().first == "path" {
        printAckPath(acks: CommandLine.arguments.dropFirst(2).first.flatMap { Int($0) } ?? 300_000)
        return
    }
    var seq: UInt64 = 0
    func input(_ payload: IngressPayload) -> ReducerInput {
        seq += 1
        return ReducerInput(seq: seq, time: time, payload: payload)
    }


    // Memory per (channel, member): 200 channels of 1,000 members (200,000 states).
    var reducer = ReceiptReducer()
    let before = residentBytes()
    for c in 0..<200 {
        _ = reducer.apply(input(.channelCreated(cid: "messaging:g\(c)", members: (0..<1_000).map { "user-\($0)" })))
    }
    let memberBytes = Double(residentBytes() - before) / 200_000
    print("RESULT mode=memory per_member_bytes=\(Int(memberBytes))")

    // The same with threads and mutes (issue 18): 100 channels of 1,000 members, a tenth of
    // them muted, 20 messages each with a thread reply after every fourth (20 % replies).
    var threaded = ReceiptReducer()
    let beforeThreads = residentBytes()
    for c in 0..<100 {
        let cid = "messaging:t\(c)"
        _ = threaded.apply(input(.channelCreated(cid: cid, members: (0..<1_000).map { "user-\($0)" })))
        for u in stride(from: 0, to: 1_000, by: 10) {
            _ = threaded.apply(input(.memberUpdated(cid: cid, userID: "user-\(u)", muted: true, countUnread: nil)))
        }
        for m in 0..<20 {
            _ = threaded.apply(input(.messageNew(cid: cid, message: NewMessage(id: "t\(c)-\(m)", userID: "user-\(m)", createdAt: time))))
            if m % 4 == 3 {
                _ = threaded.apply(input(.messageNew(cid: cid, message: NewMessage(
                    id: "t\(c)-r\(m)", userID: "user-\(m + 500)", createdAt: time, parentID: "t\(c)-\(m)"))))
            }
        }
    }
    let threadedBytes = Double(residentBytes() - beforeThreads) / 100_000
    print("RESULT mode=memory per_member_bytes_threads=\(Int(threadedBytes))")

    // Memory per retained message: 1,000,000 messages in one channel, all kept.
    reducer.retainMessages = 0
    let channel = "messaging:big"
    _ = reducer.apply(input(.channelCreated(cid: channel, members: ["sender", "reader"])))
    let beforeMessages = residentBytes()
    for n in 0..<1_000_000 {
        _ = reducer.apply(input(.messageNew(cid: channel, message: NewMessage(id: "msg-\(n)", userID: "sender", createdAt: time))))
    }
    let messageBytes = Double(residentBytes() - beforeMessages) / 1_000_000
    print("RESULT mode=memory per_message_bytes=\(Int(messageBytes))")

    // Memory per (channel, member) that read more than once: 100 channels of 1,000 members,
    // three messages an hour apart, every member acking the delivery of the first, reading it a minute later,
    // then the same for the second and the third, each member at its own times. Each such member keeps the
    // history of both watermarks' moves (docs/events.md rule 13).
    /// 03:10:00.000 of the bench's day plus `milliseconds` (under 20 hours).
    func at(_ milliseconds: Int) -> String {
        let t = 11_400_000 + milliseconds
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let ms = t % 1_000
        return "2026-11-22T\(two(t / 3_600_000)):\(two(t / 60_000 % 60)):\(two(t / 1_000 % 60)).\(ms < 10 ? "00" : ms < 100 ? "0" : "")\(ms)Z"
    }
    var active = ReceiptReducer()
    let beforeActive = residentBytes()
    for c in 0..<100 {
        let cid = "messaging:a\(c)"
        _ = active.apply(input(.channelCreated(cid: cid, members: ["sender"] + (0..<1_000).map { "user-\($0)" })))
        for m in 0..<3 {
            _ = active.apply(input(.messageNew(cid: cid, message: NewMessage(id: "a\(c)-\(m)", userID: "sender", createdAt: time))))
        }
        for m in 0..<3 {
            for u in 0..<1_000 {
                let id = "a\(c)-\(m)", delivered = m * 3_600_000 + u * 37
                _ = active.apply(input(.messageDelivered(cid: cid, userID: "user-\(u)", messageID: id, deliveredAt: at(delivered))))
                _ = active.apply(input(.messageRead(cid: cid, userID: "user-\(u)", messageID: id, readAt: at(delivered + 60_000))))
            }
        }
    }
    let activeBytes = Double(residentBytes() - beforeActive) / 100_000
    print("RESULT mode=memory per_active_member_bytes=\(Int(activeBytes))")

    if CommandLine.arguments.dropFirst().first == "memory" { return }

    // (Full runs only.) Memory under retention (docs/events.md rule 25): 10,000,000 messages
    // into 10 channels of 3 members with the default retention, a reader per channel acking
    // every 10th message; resident memory sampled at each million. Once each channel holds its
    // 100,000 (+ an eighth), memory stays flat: growth from 2 to 10 million is the figure.
    do {
        var kept = ReceiptReducer()
        let channels = 10
        for c in 0..<channels {
            _ = kept.apply(input(.channelCreated(cid: "messaging:r\(c)", members: ["sender", "reader", "idle"])))
        }
        var samples: [Int] = []
        let start = now()
        for n in 0..<10_000_000 {
            let cid = "messaging:r\(n % channels)"
            let id = "r\(n)"
            _ = kept.apply(input(.messageNew(cid: cid, message: NewMessage(id: id, userID: "sender", createdAt: time))))
            if n % 10 == 0 { _ = kept.apply(input(.messageRead(cid: cid, userID: "reader", messageID: id, readAt: time))) }
            if (n + 1) % 1_000_000 == 0 { samples.append(residentBytes()) }
        }
        let seconds = Double(now() - start) / 1e9
        let idle = kept.unreadMessages(cid: "messaging:r0", userID: "idle") ?? -1
        func mb(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1_048_576) }
        print("RESULT mode=retention retention_rss_mb_1m=\(mb(samples[0])) retention_rss_mb_2m=\(mb(samples[1])) "
            + "retention_rss_mb_10m=\(mb(samples[9])) retention_growth_mb=\(mb(samples[9] - samples[1])) "
            + "retention_idle_unread=\(idle) retention_seconds=\(String(format: "%.1f", seconds))")
    }


    // Queries in a channel of 100,000 members with reads spread over 1,000 messages.
    var big = ReceiptReducer()
    let cid = "messaging:huge"
    _ = big.apply(input(.channelCreated(cid: cid, members: (0..<100_000).map { "member-\($0)" })))
    for n in 0..<1_000 {
        _ = big.apply(input(.messageNew(cid: cid, message: NewMessage(id: "m\(n)", userID: "member-\(n % 100_000)", createdAt: time))))
    }
    for user in 0..<100_000 {
        _ = big.apply(input(.messageRead(cid: cid, userID: "member-\(user)", messageID: "m\((user * 7) % 1_000)", readAt: time)))
    }
    func measure(_ method: String, _ params: String, rounds: Int = 2_000) throws -> Double {
        let parsed = try JSONParser.parse(Array(params.utf8))
        var samples: [Double] = []
        samples.reserveCapacity(rounds)
        for _ in 0..<rounds {
            let start = now()
            _ = try big.query(method: method, params: parsed)
            samples.append(Double(now() - start) / 1_000)
        }
        return median(samples)
    }
    let receipts = try measure("message_receipts", #"{"cid":"\#(cid)","message_id":"m500","viewer":"member-1","page_size":50}"#)
    let unread = try measure("unread_counts", #"{"user_id":"member-42"}"#)
    print("RESULT mode=queries members=100000 message_receipts_us=\(String(format: "%.1f", receipts)) unread_counts_us=\(String(format: "%.1f", unread))")

    // Count notifications (docs/events.md rules 21 and 24) in the same 100,000-member channel:
    // deleting a message unread for every member but its sender, and a message with counts
    // pushed to every member (limit 100,000), then the same in a 1,000-member channel.
    func timed(_ reducer: inout ReceiptReducer, _ payload: IngressPayload) -> (us: Double, events: Int) {
        let start = now()
        let outputs = reducer.apply(input(payload))
        return (Double(now() - start) / 1_000, outputs.count)
    }
    func newMessage(_ id: String) -> IngressPayload {
        .messageNew(cid: cid, message: NewMessage(id: id, userID: "member-0", createdAt: time))
    }
    _ = big.apply(input(newMessage("unread-by-all")))
    let deletion = timed(&big, .messageDeleted(cid: cid, messageID: "unread-by-all"))
    big.pushCountsUpTo = 100_000
    let pushedBig = timed(&big, newMessage("pushed-big"))
    var small = ReceiptReducer()
    small.pushCountsUpTo = 1_000
    _ = small.apply(input(.channelCreated(cid: cid, members: (0..<1_000).map { "member-\($0)" })))
    var smallSamples: [Double] = []
    for n in 0..<200 { smallSamples.append(timed(&small, newMessage("pushed-\(n)")).us) }
    print(
        "RESULT mode=notices deleted_100k_us=\(Int(deletion.us)) deleted_100k_events=\(deletion.events)",
        "pushed_new_100k_us=\(Int(pushedBig.us)) pushed_new_100k_events=\(pushedBig.events)",
        "pushed_new_1k_us=\(Int(median(smallSamples)))")

    printAckPath()
}

try runBench()
