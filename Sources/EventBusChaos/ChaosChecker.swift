import EventBusCore

/// The campaign's checker: the rules a round's history must keep, whatever faults it had.
/// Pure: it reads a ``ChaosHistory`` and returns every ``Violation`` (none for a good round).
///
/// 1. The log's SEQs are 1, 2, 3, … with no gap.
/// 2. Every published event was confirmed, and every confirmed event is in `in` at the SEQ
///    its confirm gave.
/// 3. No identity (stage, source, id) is logged twice: dedup held through every retry and
///    every restart, in every stage.
/// 4. `out` is, subject by subject (channel, `@user`), byte for byte what ``PipelineModel``
///    makes of the logged `in` events.
/// 5. Read and delivered watermarks in `out` only move forward per (channel, user), a read
///    watermark back only by the user's own `notification.mark_unread` (``WatermarkRule``).
/// 6. Each query's answer is the model's at the query's place in the log.
/// 7. The observer's deliveries keep the resume rules (``ResumeRule``).
/// 8. Nothing a hostile peer sent is in the log (``HostileMessages``): it was all refused.
public enum ChaosChecker {
    public static func check(_ history: ChaosHistory) -> [Violation] {
        var violations: [Violation] = []
        let records = history.records.sorted { $0.seq < $1.seq }
        violations += seqGaps(records)
        let bySeq = Dictionary(records.map { ($0.seq, $0) }, uniquingKeysWith: { first, _ in first })
        violations += unconfirmed(history.published, history.confirmed)
        violations += confirmedMissing(history.confirmed, bySeq)
        violations += duplicates(records)
        violations += modelComparison(history, records)
        violations += WatermarkRule.check(records)
        violations += ResumeRule.check(history.observer, records)
        violations += records.filter { $0.source == HostileMessages.source }
            .map { .hostileEventLogged(seq: $0.seq, topic: $0.topic, id: $0.id) }
        return violations
    }

    static func seqGaps(_ records: [LoggedRecord]) -> [Violation] {
        var expected: UInt64 = 1
        var violations: [Violation] = []
        for record in records {
            if record.seq != expected { violations.append(.seqGap(expected: expected, found: record.seq)) }
            expected = record.seq + 1
        }
        return violations
    }

    static func unconfirmed(_ published: [EventIdentity], _ confirmed: [ConfirmedEvent]) -> [Violation] {
        let confirmedIdentities = Set(confirmed.map { EventIdentity(source: $0.source, id: $0.id) })
        let missing = published.filter { !confirmedIdentities.contains($0) }
        guard let first = missing.first else { return [] }
        return [.unconfirmed(count: missing.count, first: first)]
    }

    static func confirmedMissing(_ confirmed: [ConfirmedEvent], _ bySeq: [UInt64: LoggedRecord]) -> [Violation] {
        confirmed.compactMap { event in
            let record = bySeq[event.seq]
            if let record, record.stage == "in", record.source == event.source, record.id == event.id { return nil }
            return .confirmedEventMissing(event, found: record.map { "\($0.topic) \($0.source) \($0.id)" })
        }
    }

    static func duplicates(_ records: [LoggedRecord]) -> [Violation] {
        var seen: [String: [UInt64]] = [:]
        var order: [String] = []
        for record in records {
            let key = "\(record.stage)\u{0}\(record.source)\u{0}\(record.id)"
            if seen[key] == nil { order.append(key) }
            seen[key, default: []].append(record.seq)
        }
        return order.compactMap { key in
            guard let seqs = seen[key], seqs.count > 1 else { return nil }
            let parts = key.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
            return .duplicateIdentity(stage: parts[0], source: parts[1], id: parts[2], seqs: seqs)
        }
    }

    /// Rules 4 and 6: the model folds `in`; `out` and the answers must be what it made.
    static func modelComparison(_ history: ChaosHistory, _ records: [LoggedRecord]) -> [Violation] {
        var model: PipelineModel
        do {
            model = try PipelineModel(pipeline: history.pipeline)
        } catch {
            return [.modelFailed(seq: 0, error: "\(error)")]
        }
        var queries: [(seq: UInt64, method: String, params: JSONValue)] = []
        for record in records where record.stage == "in" {
            do {
                try model.apply(record)
            } catch {
                return [.modelFailed(seq: record.seq, error: "\(error)")]
            }
            if record.type == "query", let data = try? EventValidator.validate(record.event, stage: "plugin").envelope.data,
               case .string(let method)? = data["method"] {
                queries.append((record.seq, method, data["params"] ?? .object([])))
            }
        }
        var violations = outDifferences(expected: model.out, logged: records.filter { $0.stage == "out" && $0.type != "reply" }.map(\.event))
        for probe in history.queries {
            let params = String(decoding: probe.params.serialized(), as: UTF8.self)
            guard let query = queries.last(where: { $0.method == probe.method && $0.params == probe.params }) else {
                violations.append(.queryNotLogged(method: probe.method, params: params))
                continue
            }
            let expected = model.answers[query.seq] ?? .null
            if expected != probe.answer {
                violations.append(.queryDiffers(method: probe.method, params: params,
                                                expected: String(decoding: expected.serialized(), as: UTF8.self),
                                                answered: String(decoding: probe.answer.serialized(), as: UTF8.self)))
            }
        }
        return violations
    }

    /// The first difference of each subject's events, model against log.
    static func outDifferences(expected: [[UInt8]], logged: [[UInt8]]) -> [Violation] {
        let expectedBySubject = bySubject(expected), loggedBySubject = bySubject(logged)
        var violations: [Violation] = []
        for subject in Set(expectedBySubject.keys).union(loggedBySubject.keys).sorted() {
            let want = expectedBySubject[subject] ?? [], have = loggedBySubject[subject] ?? []
            guard want != have else { continue }
            let index = (0..<min(want.count, have.count)).first { want[$0] != have[$0] } ?? min(want.count, have.count)
            violations.append(.outDiffers(subject: subject, index: index,
                                          expected: index < want.count ? describe(want[index]) : nil,
                                          logged: index < have.count ? describe(have[index]) : nil))
        }
        return violations
    }

    static func bySubject(_ events: [[UInt8]]) -> [String: [[UInt8]]] {
        var grouped: [String: [[UInt8]]] = [:]
        for event in events {
            let subject = (try? EventValidator.validate(event, stage: "plugin").envelope.subject) ?? "(unreadable)"
            grouped[subject, default: []].append(event)
        }
        return grouped
    }

    /// An event for a report: its JSON, cut at 300 bytes.
    static func describe(_ event: [UInt8]) -> String {
        event.count <= 300 ? String(decoding: event, as: UTF8.self) : String(decoding: event.prefix(300), as: UTF8.self) + "…"
    }
}
