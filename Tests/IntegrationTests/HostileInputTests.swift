import EventBus
import EventBusFuzzing
import EventBusTesting
import Foundation
import Testing
import ZeroMQ

/// 100,000 random and mutated messages from four peers at a running broker:
/// it stays up, serves a well-behaved client, keeps its memory bounded, and
/// its log holds exactly the events it confirmed.
@Suite(.serialized) struct HostileInputTests {
    /// Messages in all, over all peers.
    static let messageCount = 100_000
    static let peerCount = 4
    /// How much the broker's peak resident memory may exceed its resident
    /// memory before the barrage. The barrage holds about 60 MB of messages
    /// (a few 4 MiB+ frames among them); the broker may queue some of them,
    /// but never all of it twice over.
    static let memoryBound = 256 * 1024 * 1024

    /// What one peer saw: the events of its PUBs the broker confirmed, by SEQ.
    struct PeerResult: Sendable {
        var confirmed: [UInt64: [[UInt8]]] = [:]
        var validConfirmed = 0
        var validSent = 0
        var replies = 0
        var refusedValid: [String] = []
        var error: String?
    }

    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var results: [PeerResult] = []
        func add(_ result: PeerResult) { lock.withLock { results.append(result) } }
        var all: [PeerResult] { lock.withLock { results } }
    }

    /// A `/proc/PID/status` field in bytes (``ProcessStatus``: an unreadable one fails the test).
    static func status(of pid: Int32, _ field: String) throws -> Int {
        try ProcessStatus.bytes(field, of: pid)
    }

    static func validEvent(peer: Int, n: Int) -> [UInt8] {
        Array(#"{"specversion":"1.0","id":"h\#(peer)-\#(n)","source":"/hostile-test","type":"message.read","subject":"messaging:general","time":"2026-11-22T03:10:00.123Z","data":{"cid":"messaging:general","user_id":"bob","message_id":"m\#(n)"}}"#.utf8)
    }

    static let templates: [[[UInt8]]] = [
        ["EB1", "PUB", "t", "in", #"{"specversion":"1.0","id":"x1","source":"/t","type":"message.new","subject":"messaging:general","time":"2026-11-22T03:10:00.123Z","data":{"cid":"messaging:general","message":{"id":"m1","user_id":"a","created_at":"2026-11-22T03:10:00.123Z"}}}"#],
        ["EB1", "PUB", "t", "out", #"{"specversion":"1.0","id":"x2","source":"/t","type":"custom.thing","subject":"a:b","data":{}}"#],
        ["EB1", "PUB", "t", "diag", #"{"specversion":"1.0","id":"x3","source":"/t","type":"receipt.rejected","subject":"a:b","data":{"seq":1}}"#],
        ["EB1", "CONSUME", "t", "hostile-consumer", "earliest", "10", "in/"],
        ["EB1", "ACK", "t", "hostile-consumer", "5"],
        ["EB1", "CANCEL", "t", "hostile-consumer"],
        ["EB1", "REQ", "t", "nosuchservice", #"{"method":"channel_state","params":{"cid":"messaging:general"}}"#, "100"],
        ["EB1", "HELLO", "t", #"{"services":["hostile-hello-svc"]}"#],
        ["EB1", "PING", "t"],
        ["EB1", "STATS", "t"],
    ].map { $0.map { Array($0.utf8) } }

    /// Valid envelopes that fail the ingress rules at `in`.
    static let invalidEvents: [[UInt8]] = [
        #"{"specversion":"1.0","id":"i1","source":"/t","type":"message.read","subject":"messaging:other","data":{"cid":"messaging:general","user_id":"bob","message_id":"m1"}}"#,
        #"{"specversion":"1.0","id":"i2","source":"/t","type":"message.exploded","subject":"a:b","data":{}}"#,
        #"{"specversion":"1.0","id":"i3","source":"/t","type":"message.read","subject":"a:b"}"#,
        #"{"specversion":"1.0","id":"i4","source":"/t","type":"member.added","subject":"messaging:general","data":{"cid":"messaging:general","user_id":"bad id"}}"#,
        #"{"specversion":"0.3","id":"i5","source":"/t","type":"message.read","subject":"a:b","data":{}}"#,
    ].map { Array($0.utf8) }

    /// One hostile message for `index`; a valid PUB (its events returned) one time in twenty.
    static func message(_ index: Int, peer: Int, random: inout FuzzMutator) -> (frames: [[UInt8]], valid: [[UInt8]]?) {
        let corr = Array("p\(peer)-\(index)".utf8)
        let signature = Array("EB1".utf8)
        switch random.below(20) {
        case 0:  // a valid PUB of one to three events
            let events = (0...random.below(3)).map { validEvent(peer: peer, n: index * 4 + $0) }
            return ([signature, Array("PUB".utf8), corr, Array("in".utf8)] + events, events)
        case 1, 2:  // random frames of random bytes
            return ((0...random.below(8)).map { _ in (0..<random.below(64)).map { _ in random.byte() } }, nil)
        case 3, 4, 5:  // a mutated frame of a valid command
            var frames = templates[random.below(templates.count)]
            frames[2] = corr
            // Any frame but CORR: a mutated CORR could take another message's, and its answer.
            var position = random.below(frames.count - 1)
            if position >= 2 { position += 1 }
            frames[position] = random.mutate(frames[position])
            return (frames, nil)
        case 6:  // a truncated valid command
            let frames = templates[random.below(templates.count)]
            return (Array(frames.prefix(1 + random.below(frames.count))), nil)
        case 7:  // a CORR of the wrong size
            var frames = templates[random.below(templates.count)]
            frames[2] = [UInt8](repeating: UInt8(ascii: "c"), count: 65 + random.below(300))
            return (frames, nil)
        case 8, 9:  // valid envelopes, invalid events
            let events = (0...random.below(2)).map { _ in invalidEvents[random.below(invalidEvents.count)] }
            return ([signature, Array("PUB".utf8), corr, Array("in".utf8)] + events, nil)
        case 10, 11:  // malformed JSON where JSON is due
            let json = random.mutate(Array(#"{"specversion":"1.0","data":{"a":[1,2,{"b":"\u00e9"}]}}"#.utf8))
            let verbs = ["PUB", "HELLO", "REQ"]
            let verb = verbs[random.below(3)]
            let frames: [[UInt8]] = verb == "REQ"
                ? [signature, Array(verb.utf8), corr, Array("svc".utf8), json, Array("100".utf8)]
                : verb == "PUB" ? [signature, Array(verb.utf8), corr, Array("in".utf8), json] : [signature, Array(verb.utf8), corr, json]
            return (frames, nil)
        case 12:  // a wrong verb, stage or frame count
            let words = ["pub", "PUBX", "EVT", "OK", "ERR", "END", "", "in", "PUB\u{0}"]
            return ([signature, Array(words[random.below(words.count)].utf8), corr] + (0..<random.below(4)).map { _ in [random.byte()] }, nil)
        case 13 where index % 5_000 == 13:  // now and then an oversized event (over the 4 MiB batch limit)
            return ([signature, Array("PUB".utf8), corr, Array("in".utf8), [UInt8](repeating: UInt8(ascii: " "), count: 4 * 1024 * 1024 + 1)], nil)
        default:  // a mutated valid PUB: may well stay valid, and is then confirmed like any other
            var frames = templates[random.below(3)]
            frames[2] = corr
            frames[4] = random.mutate(validEvent(peer: peer, n: index * 4 + 3))
            return (frames, nil)
        }
    }

    /// One peer: sends its share without waiting, reads replies as they come, then drains them.
    static func runPeer(_ peer: Int, endpoint: String, count: Int, context: Context) -> PeerResult {
        var result = PeerResult()
        do {
            let socket = try Socket(context: context, type: .dealer)
            defer { socket.close() }
            try socket.setLinger(0)
            try socket.connect(endpoint)
            var random = FuzzMutator(seed: UInt64(peer) &* 7_919 &+ 1)
            /// The PUBs sent and not yet answered, by CORR: their event frames.
            var pubs: [[UInt8]: [[UInt8]]] = [:]
            var validCorrelations: Set<[UInt8]> = []
            var outstanding = 0
            func take(_ reply: [[UInt8]]) {
                guard reply.count >= 3, reply[1] == Array("OK".utf8) || reply[1] == Array("ERR".utf8) else { return }
                result.replies += 1
                guard let events = pubs.removeValue(forKey: reply[2]) else { return }
                outstanding -= 1
                guard reply[1] == Array("OK".utf8), reply.count == 3 + events.count else {
                    if validCorrelations.contains(reply[2]) {
                        result.refusedValid.append(reply.map { String(decoding: $0.prefix(200), as: UTF8.self) }.joined(separator: " | "))
                    }
                    return
                }
                if validCorrelations.contains(reply[2]) { result.validConfirmed += 1 }
                for (event, seqText) in zip(events, reply[3...]) {
                    guard let seq = UInt64(String(decoding: seqText, as: UTF8.self)) else { continue }
                    result.confirmed[seq, default: []].append(event)
                }
            }
            for index in 0..<count {
                let (frames, valid) = message(index, peer: peer, random: &random)
                if frames.count > 4, frames[0] == Array("EB1".utf8), frames[1] == Array("PUB".utf8),
                   frames[2].count <= WireProtocol.maxCorrelationBytes, pubs[frames[2]] == nil {
                    pubs[frames[2]] = Array(frames[4...])
                    outstanding += 1
                    if valid != nil {
                        validCorrelations.insert(frames[2])
                        result.validSent += 1
                    }
                }
                _ = try socket.send(frames)
                while let reply = try socket.receive(dontWait: true) { take(reply) }
            }
            // Every PUB gets its answer; EVTs of hostile consumers are read and ignored.
            try socket.setReceiveTimeout(20_000)
            while outstanding > 0 {
                guard let reply = try socket.receive() else {
                    result.error = "peer \(peer): \(outstanding) PUBs unanswered after 20 s: \(pubs.keys.prefix(5).map { String(decoding: $0, as: UTF8.self) })"
                    break
                }
                take(reply)
            }
        } catch {
            result.error = "peer \(peer): \(error)"
        }
        return result
    }

    @Test func aBarrageOfHostileMessagesLeavesTheBrokerServingWithBoundedMemoryAndAnExactLog() async throws {
        let context = try Context()
        let broker = try BrokerProcess(arguments: ["--log-level", "error"])
        try await broker.start(context: context)
        try await broker.terminateAfter {
            let pid = try #require(broker.process?.processIdentifier)
            let before = try Self.status(of: pid, "VmRSS")

            let results = Results()
            let done = DispatchSemaphore(value: 0)
            let endpoint = broker.commandEndpoint
            for peer in 0..<Self.peerCount {
                let thread = Thread {
                    results.add(Self.runPeer(peer, endpoint: endpoint, count: Self.messageCount / Self.peerCount, context: context))
                    done.signal()
                }
                thread.start()
            }
            for _ in 0..<Self.peerCount { done.wait() }
            let peers = results.all
            for result in peers { #expect(result.error == nil, "\(result.error ?? "")") }

            // Alive, and serving a well-behaved client.
            #expect(broker.process?.isRunning == true, "the broker died: \(broker.log.suffix(2_000))")
            let peak = try Self.status(of: pid, "VmHWM"), after = try Self.status(of: pid, "VmRSS")
            #expect(peak - before < Self.memoryBound,
                    "broker peak memory \(peak / 1_048_576) MB from \(before / 1_048_576) MB (bound \(Self.memoryBound / 1_048_576) MB)")
            #expect(after - before < Self.memoryBound)

            let client = try Socket(context: context, type: .dealer)
            defer { client.close() }
            try client.setLinger(0)
            try client.setReceiveTimeout(10_000)
            try client.connect(broker.commandEndpoint)
            let last = Self.validEvent(peer: 99, n: 1)
            try client.send([Array("EB1".utf8), Array("PUB".utf8), Array("final".utf8), Array("in".utf8), last])
            let ok = try #require(try client.receive())
            try #require(ok.count == 4 && ok[1] == Array("OK".utf8), "the final PUB: \(ok.map { String(decoding: $0, as: UTF8.self) })")
            let lastSeq = try #require(UInt64(String(decoding: ok[3], as: UTF8.self)))

            // The log: exactly the confirmed events, SEQ 1 to the last, nothing else.
            var confirmed: [UInt64: [[UInt8]]] = [lastSeq: [last]]
            for result in peers {
                for (seq, events) in result.confirmed { confirmed[seq, default: []] += events }
            }
            let validSent = peers.reduce(0) { $0 + $1.validSent }, validConfirmed = peers.reduce(0) { $0 + $1.validConfirmed }
            #expect(validSent > 4_000)
            #expect(validConfirmed == validSent, "every valid PUB is confirmed; refused: \(peers.flatMap(\.refusedValid).prefix(5))")
            let unconfirmed = Set(1...lastSeq).subtracting(confirmed.keys).sorted()
            let beyond = Set(confirmed.keys).subtracting(1...lastSeq).sorted()
            #expect(unconfirmed.isEmpty, "the log holds \(unconfirmed.count) events no PUB confirmed, at SEQ \(unconfirmed.prefix(10))")
            #expect(beyond.isEmpty, "confirmed SEQs past the log's head: \(beyond.prefix(10))")

            try client.send([Array("EB1".utf8), Array("CONSUME".utf8), Array("read".utf8), Array("hostile-check".utf8),
                             Array("earliest".utf8), Array("65536".utf8), Array()])
            var read = 0
            var mismatches: [UInt64] = []
            while let frames = try client.receive() {
                if frames[1] == Array("OK".utf8) || frames[1] == Array("ERR".utf8) {
                    #expect(frames[1] == Array("OK".utf8), "CONSUME: \(frames.map { String(decoding: $0, as: UTF8.self) })")
                    continue
                }
                guard frames.count == 6, frames[1] == Array("EVT".utf8),
                      let seq = UInt64(String(decoding: frames[3], as: UTF8.self)) else { continue }
                read += 1
                let candidates = confirmed[seq] ?? []
                // An event sent without `time` is stored with the broker's, as its first member.
                if !candidates.contains(where: { $0 == frames[5] || Self.unstamped(frames[5]) == $0 }) {
                    mismatches.append(seq)
                    if mismatches.count < 3 {
                        Issue.record("SEQ \(seq): log \(String(decoding: frames[5], as: UTF8.self)) confirmed \(candidates.map { String(decoding: $0, as: UTF8.self) })")
                    }
                }
                if seq == lastSeq { break }
            }
            #expect(mismatches.isEmpty, "log events that differ from what was confirmed at their SEQ: \(mismatches.prefix(10))")
            // Every SEQ from 1 to the last was read back once: the log holds the confirmed events and nothing else.
            #expect(read == Int(lastSeq))
            #expect(broker.process?.isRunning == true)
        }
    }

    /// `event` without a leading `"time":"…",` member the broker stamped.
    static func unstamped(_ event: [UInt8]) -> [UInt8] {
        let prefix = Array(#"{"time":""#.utf8)
        guard event.starts(with: prefix), let end = event[prefix.count...].firstIndex(of: UInt8(ascii: "\"")),
              end + 1 < event.count, event[end + 1] == UInt8(ascii: ",") else { return event }
        return [UInt8(ascii: "{")] + event[(end + 2)...]
    }
}
