import EventBus

/// A CONSUME's arguments, checked in the order and with the errors of docs/protocol.md
/// ("CONSUME"), plus the one rule of this backend: the prefixes select one stage.
///
/// SEQs are stream sequences, one sequence per stage's stream, so one consumer reads one
/// stage; a prefix set spanning stages (`""`, `o`, `in/` with `out/`) is `bad_args`.
public struct ConsumeRequest: Sendable, Equatable {
    public enum Start: Sendable, Equatable {
        case earliest, latest, resume
        case sequence(UInt64)
    }

    public var name: String
    public var start: Start
    public var credit: Int
    public var prefixes: [[UInt8]]
    /// The one stage the prefixes select.
    public var stage: String

    package static func parse(_ message: CommandMessage, stages: [String]) throws(BusError) -> ConsumeRequest {
        func argument(_ position: Int, _ what: String) throws(BusError) -> String {
            String(decoding: try message.argument(position, what), as: UTF8.self)
        }
        let name = try argument(0, "NAME")
        guard isValidName(name) else {
            throw BusError(.badArgs, "frame 3: consumer NAME must match [a-z0-9_.-]{1,64}")
        }
        let startText = try argument(1, "START")
        let creditText = try argument(2, "CREDIT")
        guard let credit = Int(creditText), credit >= 1, credit <= WireProtocol.maxCredit else {
            throw BusError(.badArgs, "frame 5: CREDIT must be a decimal from 1 to \(WireProtocol.maxCredit)")
        }
        let prefixes = Array(message.arguments.dropFirst(3))
        guard !prefixes.isEmpty else {
            throw BusError(.badArgs, "CONSUME: at least one PREFIX frame (frame 6) is needed")
        }
        var selected: Set<String> = []
        for (position, prefix) in prefixes.enumerated() {
            let matching = stagesMatching(prefix, stages: stages)
            if matching.isEmpty {
                throw BusError(.unknownStage, "frame \(6 + position): prefix \"\(String(decoding: prefix.prefix(64), as: UTF8.self))\" matches no configured stage")
            }
            selected.formUnion(matching)
        }
        let start: Start
        switch startText {
        case "earliest": start = .earliest
        case "latest": start = .latest
        case "resume": start = .resume
        default:
            guard let seq = UInt64(startText), seq >= 1 else {
                throw BusError(.badArgs, "frame 4: START must be earliest, latest, resume or a SEQ ≥ 1")
            }
            start = .sequence(seq)
        }
        guard selected.count == 1, let stage = selected.first else {
            throw BusError(.badArgs, "CONSUME: the prefixes select the stages \(stages.filter(selected.contains).joined(separator: ", ")); "
                + "on the JetStream backend a consumer reads one stage (SEQs are per stage), so end each prefix in STAGE/")
        }
        return ConsumeRequest(name: name, start: start, credit: credit, prefixes: prefixes, stage: stage)
    }

    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { byte in
            (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5f || byte == 0x2e || byte == 0x2d
        }
    }

    /// The stages a prefix can match: it begins with `STAGE/`, or is a beginning of it.
    static func stagesMatching(_ prefix: [UInt8], stages: [String]) -> Set<String> {
        Set(stages.filter { stage in
            let head = Array(stage.utf8) + [UInt8(ascii: "/")]
            return prefix.starts(with: head) || head.starts(with: prefix)
        })
    }

    /// Whether an event with `topic` and `type` goes to this consumer: its topic starts with
    /// a prefix, and it is not one `out` withholds (private types, `query`, `reply`).
    public func delivers(topic: [UInt8], type: String) -> Bool {
        if stage == Stage.out, type == EventType.query.rawValue || type == EventType.reply.rawValue
            || (EventType(rawValue: type)?.isPrivate ?? false) {
            return false
        }
        return prefixes.contains { topic.starts(with: $0) }
    }
}
