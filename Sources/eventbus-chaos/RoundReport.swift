import EventBusChaos

/// What one round did and found.
struct RoundReport {
    let plan: FaultPlan
    let confirmed: Int
    let inEvents: Int
    let outEvents: Int
    /// Confirmed events not in `in` (must be 0).
    let lost: Int
    /// Identities logged twice (must be 0).
    let duplicates: Int
    /// From the fault to the pipeline moving again (see ``ChaosRound/awaitRecovery``); nil if it
    /// never had to (a fault on a process that had already finished).
    let recovery: Double?
    /// What the fault actually did, when it differs from the plan's words (a tail with
    /// nothing past the durable record).
    let note: String?
    /// Whole records a torn tail cut (nil without one).
    let tornRecords: Int?
    /// How often the observer attached, and how many events it was sent again.
    let attachments: Int
    let redelivered: Int
    let violations: [Violation]
    let directory: String
    let seconds: Double
    /// The honest publishers' confirm latency, p99 over the round's batches (ms), beside a hostile peer.
    let confirmP99: Double?
    /// `eventbus up`'s peak resident memory (MiB), its last run.
    let peakResident: Double?
    /// Its bound by docs/operations.md (MiB, ``BrokerMemoryBound``).
    let memoryBound: Double?
}
