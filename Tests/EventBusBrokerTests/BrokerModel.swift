/// A naive model of docs/protocol.md's rules for PUB, dedup, CONSUME, ACK,
/// CANCEL, credit, commit and restart, on one stage (`in`), written from the
/// document rather than from the broker: plain arrays and dictionaries, no
/// index, no cache, no log. ``BrokerModelTests`` runs the same steps on the
/// broker core and on this, and compares what each peer receives.
struct BrokerModel {
    /// One step of a generated sequence.
    enum Step: CustomStringConvertible, Equatable {
        enum Start: Equatable { case earliest, latest, resume, seq(UInt64) }
        /// A PUB of events with ids `ids` (a `nil` is an event that is not JSON), or a PUBS when `batch`.
        case pub(peer: Int, ids: [Int?], batch: Bool)
        case consume(peer: Int, name: Int, start: Start, credit: Int)
        case ack(peer: Int, name: Int, seq: UInt64)
        case cancel(peer: Int, name: Int)
        /// One turn of the loop: commit, then feed the consumers.
        case pass
        /// A clean stop and a start on the same data.
        case restart

        var description: String {
            switch self {
            case .pub(let peer, let ids, let batch):
                "\(batch ? "PUBS" : "PUB") p\(peer) [\(ids.map { $0.map { "e\($0)" } ?? "not-json" }.joined(separator: ","))]"
            case .consume(let peer, let name, let start, let credit): "CONSUME p\(peer) \(Self.name(name)) \(start) credit \(credit)"
            case .ack(let peer, let name, let seq): "ACK p\(peer) \(Self.name(name)) \(seq)"
            case .cancel(let peer, let name): "CANCEL p\(peer) \(Self.name(name))"
            case .pass: "pass"
            case .restart: "restart"
            }
        }

        static func name(_ n: Int) -> String { ["a", "b"][n] }
    }

    /// What the peers received: per peer, its replies and ENDs in order (verb,
    /// CORR, SEQs or error code); per peer and consumer, the SEQs delivered in order.
    struct Transcript: Equatable {
        var replies: [Int: [String]] = [:]
        var deliveries: [String: [UInt64]] = [:]

        mutating func reply(_ peer: Int, _ line: String) { replies[peer, default: []].append(line) }
        mutating func deliver(_ peer: Int, _ name: String, _ seq: UInt64) { deliveries["p\(peer)/\(name)", default: []].append(seq) }
    }

    private struct Consumer {
        var acked: UInt64 = 0
        var peer: Int?
        var next: UInt64 = 1
        var inFlight: [UInt64] = []
        var credit = 1
    }

    private(set) var transcript = Transcript()
    private var head: UInt64 = 0
    private var committed: UInt64 = 0
    private var seqOfID: [Int: UInt64] = [:]
    private var consumers: [Int: Consumer] = [:]
    private var waitingOKs: [(peer: Int, correlation: String, seqs: [UInt64])] = []

    mutating func apply(_ step: Step, correlation: String) {
        switch step {
        case .pub(let peer, let ids, _):
            guard !ids.contains(nil) else {
                transcript.reply(peer, "ERR \(correlation) bad_json")
                return
            }
            var seqs: [UInt64] = []
            for case let id? in ids {
                if let seen = seqOfID[id] {
                    seqs.append(seen)
                } else {
                    head += 1
                    seqOfID[id] = head
                    seqs.append(head)
                }
            }
            waitingOKs.append((peer, correlation, seqs))
        case .consume(let peer, let name, let start, let credit):
            var consumer = consumers[name] ?? Consumer()
            let first: UInt64
            switch start {
            case .earliest: first = 1
            case .latest: first = head + 1
            case .resume: first = consumer.acked + 1
            case .seq(let n): first = n
            }
            if let previous = consumer.peer, previous != peer { transcript.reply(previous, "END \(Step.name(name))") }
            consumer.peer = peer
            consumer.credit = credit
            consumer.next = first
            consumer.inFlight = []
            consumers[name] = consumer
            transcript.reply(peer, "OK \(correlation) \(first)")
        case .ack(let peer, let name, let seq):
            guard var consumer = consumers[name], consumer.peer == peer, seq >= 1, seq <= head else {
                transcript.reply(peer, "ERR \(correlation) bad_args")
                return
            }
            consumer.inFlight.removeAll { $0 <= seq }
            consumer.acked = max(consumer.acked, seq)
            consumer.next = max(consumer.next, seq + 1)
            consumers[name] = consumer
        case .cancel(let peer, let name):
            guard var consumer = consumers[name], consumer.peer == peer else {
                transcript.reply(peer, "ERR \(correlation) bad_args")
                return
            }
            consumer.peer = nil
            consumer.inFlight = []
            consumers[name] = consumer
            transcript.reply(peer, "OK \(correlation)")
        case .pass:
            commit()
            for name in consumers.keys.sorted() {
                guard var consumer = consumers[name], let peer = consumer.peer else { continue }
                while consumer.inFlight.count < consumer.credit && consumer.next <= committed {
                    transcript.deliver(peer, Step.name(name), consumer.next)
                    consumer.inFlight.append(consumer.next)
                    consumer.next += 1
                }
                consumers[name] = consumer
            }
        case .restart:
            commit()
            for name in consumers.keys {
                consumers[name]?.peer = nil
                consumers[name]?.inFlight = []
            }
        }
    }

    private mutating func commit() {
        for ok in waitingOKs { transcript.reply(ok.peer, (["OK", ok.correlation] + ok.seqs.map(String.init)).joined(separator: " ")) }
        waitingOKs.removeAll()
        committed = head
    }
}
