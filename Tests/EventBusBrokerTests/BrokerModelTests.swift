import EventBus
import Foundation
import Testing

@testable import EventBusBroker

/// Random sequences of PUB, PUBS, duplicates, CONSUME with every START, ACK
/// within and beyond what was sent, CANCEL, takeovers, credit exhaustion and
/// restarts, run on the broker core and on ``BrokerModel``: every reply,
/// END and delivery must agree. A failing sequence is shrunk and printed.
/// Deliberately broken brokers (``Mutant``) must each be caught.
@Suite struct BrokerModelTests {
    typealias Step = BrokerModel.Step

    /// Ways to break the broker, each applied from outside the core.
    enum Mutant: CaseIterable, CustomStringConvertible {
        /// An ACK sets the offset even when it is lower.
        case ackMovesBack
        /// A takeover sends the old peer no END.
        case takeoverWithoutEND
        /// The dedup window forgets every identity at each pass.
        case dedupForgets

        var description: String {
            switch self {
            case .ackMovesBack: "an ACK that moves the offset back"
            case .takeoverWithoutEND: "a takeover without END"
            case .dedupForgets: "a dedup that forgets"
            }
        }
    }

    static func steps(seed: UInt64, count: Int) -> [Step] {
        var random = SplitMix64(seed: seed)
        var steps: [Step] = []
        var published = 0
        // Who last attached each name: most ACKs and CANCELs come from it, as a real client's would.
        var holder: [Int: Int] = [:]
        for _ in 0..<count {
            let roll = Int.random(in: 0..<100, using: &random)
            let peer = Int.random(in: 0..<3, using: &random)
            let name = Int.random(in: 0..<2, using: &random)
            switch roll {
            case 0..<32:
                let ids = (0..<Int.random(in: 1...4, using: &random)).map { _ -> Int? in
                    Int.random(in: 0..<100, using: &random) < 4 ? nil : Int.random(in: 0..<12, using: &random)
                }
                published += ids.count
                steps.append(.pub(peer: peer, ids: ids, batch: Bool.random(using: &random)))
            case 32..<48:
                let start: Step.Start = [.earliest, .latest, .resume, .seq(UInt64.random(in: 1...8, using: &random))]
                    .randomElement(using: &random)!
                steps.append(.consume(peer: peer, name: name, start: start, credit: Int.random(in: 1...4, using: &random)))
                holder[name] = peer
            case 48..<68:
                let from = Int.random(in: 0..<10, using: &random) < 7 ? holder[name] ?? peer : peer
                steps.append(.ack(peer: from, name: name, seq: UInt64.random(in: 1...UInt64(published + 2), using: &random)))
            case 68..<73:
                steps.append(.cancel(peer: Int.random(in: 0..<10, using: &random) < 7 ? holder[name] ?? peer : peer, name: name))
            case 73..<95:
                steps.append(.pass)
            default:
                steps.append(.restart)
            }
        }
        return steps + [.pass]
    }

    static func event(_ id: Int?) -> [UInt8] {
        guard let id else { return Array("{not json".utf8) }
        return Events.read(message: "m1", id: "model-e\(id)")
    }

    /// Runs `steps` on a fresh broker core (broken by `mutant`, if any).
    static func runCore(_ steps: [Step], mutant: Mutant? = nil) throws -> BrokerModel.Transcript {
        let bus = try CoreHarness()
        defer { bus.close() }
        var transcript = BrokerModel.Transcript()
        func collect() {
            for message in bus.replies() {
                guard let peer = Int(String(decoding: message.peer.dropFirst(), as: UTF8.self)) else { continue }
                switch message.verb {
                case "EVT":
                    transcript.deliver(peer, String(decoding: message.frames[2], as: UTF8.self), UInt64(message.arguments[0]) ?? 0)
                case "END":
                    if mutant != .takeoverWithoutEND { transcript.reply(peer, "END \(String(decoding: message.frames[2], as: UTF8.self))") }
                case "ERR":
                    transcript.reply(peer, "ERR \(message.correlation) \(message.arguments.first ?? "")")
                default:
                    transcript.reply(peer, ([message.verb, message.correlation] + message.arguments).joined(separator: " "))
                }
            }
        }
        for (index, step) in steps.enumerated() {
            let correlation = "c\(index)"
            switch step {
            case .pub(let peer, let ids, let batch):
                let events = ids.map(Self.event)
                bus.send(batch ? "PUBS" : "PUB", [Array("in".utf8)] + (batch ? [PublishBatch.encode(events)] : events),
                         correlation: correlation, peer: "p\(peer)")
            case .consume(let peer, let name, let start, let credit):
                let startText: String
                switch start {
                case .earliest: startText = "earliest"
                case .latest: startText = "latest"
                case .resume: startText = "resume"
                case .seq(let n): startText = String(n)
                }
                bus.send("CONSUME", [Step.name(name), startText, String(credit), "in/"], correlation: correlation, peer: "p\(peer)")
            case .ack(let peer, let name, let seq):
                bus.send("ACK", [Step.name(name), String(seq)], correlation: correlation, peer: "p\(peer)")
                if mutant == .ackMovesBack, let consumer = bus.core.consumers[Step.name(name)],
                   consumer.peer == Array("p\(peer)".utf8), seq <= bus.core.log.headSeq {
                    consumer.acked = seq
                }
            case .cancel(let peer, let name):
                bus.send("CANCEL", [Step.name(name)], correlation: correlation, peer: "p\(peer)")
            case .pass:
                try bus.pass()
                if mutant == .dedupForgets {
                    bus.core.dedup = DedupWindow(ageMilliseconds: 600_000, minimumCount: 1_000, maximumCount: 4_000)
                }
            case .restart:
                try bus.restart()
            }
            collect()
        }
        return transcript
    }

    static func runModel(_ steps: [Step]) -> BrokerModel.Transcript {
        var model = BrokerModel()
        for (index, step) in steps.enumerated() { model.apply(step, correlation: "c\(index)") }
        return model.transcript
    }

    static func agrees(_ steps: [Step], mutant: Mutant? = nil) throws -> Bool {
        try runCore(steps, mutant: mutant) == runModel(steps)
    }

    /// Removes steps one at a time while the sequence still disagrees.
    static func shrink(_ steps: [Step], mutant: Mutant? = nil) throws -> [Step] {
        var current = steps
        var index = 0
        while index < current.count {
            var candidate = current
            candidate.remove(at: index)
            if try !agrees(candidate, mutant: mutant) { current = candidate } else { index += 1 }
        }
        return current
    }

    static func explain(_ steps: [Step], mutant: Mutant? = nil) throws -> String {
        let core = try runCore(steps, mutant: mutant), model = runModel(steps)
        return steps.enumerated().map { "  c\($0.offset): \($0.element)" }.joined(separator: "\n")
            + "\n  core:  \(core.replies.sorted { $0.key < $1.key }) \(core.deliveries.sorted { $0.key < $1.key })"
            + "\n  model: \(model.replies.sorted { $0.key < $1.key }) \(model.deliveries.sorted { $0.key < $1.key })"
    }

    static let sequences = 300

    @Test func theBrokerCoreAgreesWithTheModelOnRandomSequences() throws {
        for seed in 1...UInt64(Self.sequences) {
            let steps = Self.steps(seed: seed, count: 40)
            guard try !Self.agrees(steps) else { continue }
            let shrunk = try Self.shrink(steps)
            Issue.record("seed \(seed): the broker core and the model disagree; shrunk to:\n\(try Self.explain(shrunk))")
            return
        }
    }

    @Test(arguments: Mutant.allCases)
    func aBrokenBrokerIsCaughtAndShrunk(_ mutant: Mutant) throws {
        for seed in 1...UInt64(Self.sequences) {
            let steps = Self.steps(seed: seed, count: 40)
            guard try !Self.agrees(steps, mutant: mutant) else { continue }
            let shrunk = try Self.shrink(steps, mutant: mutant)
            #expect(shrunk.count <= 8, "\(mutant): shrunk to \(shrunk.count) steps")
            print("\(mutant), seed \(seed), shrunk from \(steps.count) to \(shrunk.count) steps:\n\(try Self.explain(shrunk, mutant: mutant))")
            return
        }
        Issue.record("\(mutant): no sequence of \(Self.sequences) told it from the model")
    }
}
