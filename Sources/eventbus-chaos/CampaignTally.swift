import EventBusChaos

/// The campaign's figures over its rounds: docs/reliability.md's table.
struct CampaignTally {
    var rounds = 0
    var faults: [String: Int] = [:]
    var confirmed = 0
    var lost = 0
    var duplicates = 0
    var longestRecovery: Double = 0
    var longestRecoveryFault = ""
    var failed = 0
    /// Torn tails and failing fsyncs that cut at least one record, and the records they cut.
    var tearsThatCut = 0
    var tornRecords = 0
    /// Per fault kind, the honest publishers' confirm p99 of each round (ms), beside a hostile peer.
    var confirmP99s: [String: [Double]] = [:]
    /// The highest peak resident memory of `eventbus up` in any round (MiB).
    var peakResident: Double = 0

    mutating func add(_ report: RoundReport) {
        rounds += 1
        faults[report.plan.fault.kind, default: 0] += 1
        confirmed += report.confirmed
        lost += report.lost
        duplicates += report.duplicates
        if let recovery = report.recovery, recovery > longestRecovery {
            longestRecovery = recovery
            longestRecoveryFault = report.plan.fault.kind
        }
        if !report.violations.isEmpty { failed += 1 }
        if let p99 = report.confirmP99 { confirmP99s[report.plan.fault.kind, default: []].append(p99) }
        peakResident = max(peakResident, report.peakResident ?? 0)
        if let torn = report.tornRecords, torn > 0 {
            tearsThatCut += 1
            tornRecords += torn
        }
    }

    /// "kind median / worst ms", by kind.
    private var latencyList: String {
        confirmP99s.keys.sorted().map { kind in
            let values = confirmP99s[kind]!.sorted()
            return String(format: "%@ %.0f / %.0f ms", kind, values[values.count / 2], values.last!)
        }.joined(separator: ", ")
    }

    /// The table, in Markdown.
    var table: String {
        let faultList = faults.keys.sorted().map { "\($0): \(faults[$0]!)" }.joined(separator: ", ")
        return """
        | rounds | faults by type | tails cut (records) | events confirmed | lost | duplicates | longest recovery | failed rounds |
        |---|---|---|---|---|---|---|---|
        | \(rounds) | \(faultList) | \(tearsThatCut) (\(tornRecords) records) | \(confirmed) | \(lost) | \(duplicates) | \(String(format: "%.2f", longestRecovery)) s (\(longestRecoveryFault)) | \(failed) |

        Beside a hostile peer in every round: `eventbus up` peaked at \(String(format: "%.0f", peakResident)) MiB resident; \
        the honest publishers' confirm p99 by fault (median of the rounds' p99, the worst): \(latencyList).
        """
    }
}
