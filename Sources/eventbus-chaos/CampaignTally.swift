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
        if let torn = report.tornRecords, torn > 0 {
            tearsThatCut += 1
            tornRecords += torn
        }
    }

    /// The table, in Markdown.
    var table: String {
        let faultList = faults.keys.sorted().map { "\($0): \(faults[$0]!)" }.joined(separator: ", ")
        return """
        | rounds | faults by type | tails cut (records) | events confirmed | lost | duplicates | longest recovery | failed rounds |
        |---|---|---|---|---|---|---|---|
        | \(rounds) | \(faultList) | \(tearsThatCut) (\(tornRecords) records) | \(confirmed) | \(lost) | \(duplicates) | \(String(format: "%.2f", longestRecovery)) s (\(longestRecoveryFault)) | \(failed) |
        """
    }
}
