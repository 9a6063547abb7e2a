import EventBus
import EventBusChaos
import Foundation

extension ChaosRound {
    /// Reads the log from disk and what the publishers recorded, and runs the checker.
    func check(setupConfirms: [(line: Int, seq: UInt64)], queries: [QueryProbe], recovery: Double?) throws -> RoundReport {
        let records = try SegmentScanner.records(in: up.dataDirectory + "/log")
        let identities = share.lines.map { line -> EventIdentity? in
            guard let json = try? JSONParser.parse(line), let source = json["source"]?.stringValue, let id = json["id"]?.stringValue else { return nil }
            return EventIdentity(source: source, id: id)
        }
        var confirms = setupConfirms
        for index in publishers.indices { confirms += ConfirmFile(path: confirmPath(index)).read() }
        let confirmed = try confirms.map { entry -> ConfirmedEvent in
            guard entry.line < identities.count, let identity = identities[entry.line] else {
                throw ChaosRunError("confirm of line \(entry.line), which is no event of the workload")
            }
            return ConfirmedEvent(source: identity.source, id: identity.id, seq: entry.seq)
        }
        let history = ChaosHistory(pipeline: plan.pipeline, records: records, confirmed: confirmed, published: identities.compactMap { $0 },
                                   observer: observer.log, queries: queries)
        var violations = ChaosChecker.check(history)
        var bound: BrokerMemoryBound?
        if let ready = readyResident {
            // The records in the cache are (at most) those logged: topic, identity and event bytes.
            let loggedBytes = records.reduce(0) { $0 + $1.event.count + $1.topic.utf8.count + $1.source.utf8.count + $1.id.utf8.count }
            bound = BrokerMemoryBound(readyBytes: ready, loggedBytes: loggedBytes, records: records.count)
        }
        if let bound, let peakBytes, let violation = bound.check(peakBytes: peakBytes) {
            violations.append(violation)
        }
        if !violations.isEmpty {
            // The observer's history beside the kept data, for whoever replays the round.
            let steps = history.observer.steps.map { step -> String in
                if case .delivered(let seq, _) = step { return "delivered(seq: \(seq))" }
                return "\(step)"
            }
            try? steps.joined(separator: "\n").write(to: directory.appendingPathComponent("observer.txt"), atomically: true, encoding: .utf8)
        }
        return RoundReport(
            plan: plan, confirmed: Set(confirmed.map(\.id)).count,
            inEvents: records.filter { $0.stage == "in" }.count, outEvents: records.filter(\.isDeliveredFromOut).count,
            lost: violations.filter { if case .confirmedEventMissing = $0 { true } else { false } }.count,
            duplicates: violations.filter { if case .duplicateIdentity = $0 { true } else { false } }.count,
            recovery: recovery, note: note, tornRecords: tornRecords,
            attachments: history.observer.attachments, redelivered: history.observer.redelivered,
            violations: violations, directory: directory.path, seconds: clock.seconds,
            confirmP99: confirmP99(), peakResident: peakBytes.map { Double($0) / 1_048_576 }, memoryBound: bound.map { Double($0.bytes) / 1_048_576 })
    }
}
