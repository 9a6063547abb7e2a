import CoreMetrics

/// A plugin runner's swift-metrics instruments, labelled with the plugin's name.
///
/// They report to the backend the process bootstrapped (`--metrics` installs
/// Prometheus); otherwise swift-metrics makes them no-ops. Counted per batch.
struct PluginMetrics {
    private let eventsIn: Counter
    private let forwarded: Counter
    private let diagnostics: Counter
    private let batch: Timer
    private let snapshot: Timer
    private let appliedSeq: Gauge

    init(plugin: String, outputStage: String) {
        let name = [("plugin", plugin)]
        eventsIn = Counter(label: "eventbus_plugin_events_in_total", dimensions: name)
        forwarded = Counter(label: "eventbus_plugin_events_out_total", dimensions: name + [("stage", outputStage)])
        diagnostics = Counter(label: "eventbus_plugin_events_out_total", dimensions: name + [("stage", "diag")])
        batch = Timer(label: "eventbus_plugin_batch_duration_seconds", dimensions: name)
        snapshot = Timer(label: "eventbus_plugin_snapshot_duration_seconds", dimensions: name)
        appliedSeq = Gauge(label: "eventbus_plugin_applied_seq", dimensions: name)
    }

    /// A batch of `count` events was handled, its output confirmed and acked.
    func batch(count: Int, forwarded out: Int, diagnostics diag: Int, seq: UInt64, nanoseconds: UInt64) {
        eventsIn.increment(by: count)
        if out > 0 { forwarded.increment(by: out) }
        if diag > 0 { diagnostics.increment(by: diag) }
        batch.recordNanoseconds(Int64(clamping: nanoseconds))
        appliedSeq.record(Int64(clamping: seq))
    }

    /// A snapshot of the state was committed in `nanoseconds`.
    func snapshotted(nanoseconds: UInt64) {
        snapshot.recordNanoseconds(Int64(clamping: nanoseconds))
    }
}
