import CoreMetrics
import EventBus

/// The broker's swift-metrics instruments.
///
/// They report to whatever backend the process bootstrapped (`eventbus broker
/// --metrics` installs Prometheus); with none, swift-metrics makes them no-ops.
/// Counters are bumped once per commit or delivery pass, not per event, so the
/// hot path pays a few atomic adds per batch. The names and labels are listed
/// in docs/operations.md.
struct BrokerMetrics {
    private var appended: [String: Counter] = [:]
    private var delivered: [String: Counter] = [:]
    private var lag: [String: Gauge] = [:]
    private var rejected: [ErrorCode: Counter] = [:]
    private var requests: [String: Counter] = [:]
    private let dedupHits = Counter(label: "eventbus_dedup_hits_total")
    private let fsync = Timer(label: "eventbus_fsync_duration_seconds")
    private let requestLatency = Timer(label: "eventbus_request_duration_seconds")
    private let headSeq = Gauge(label: "eventbus_log_head_seq")
    private let logBytes = Gauge(label: "eventbus_log_bytes")
    private let subscriptions = Gauge(label: "eventbus_stream_subscriptions")
    private let pendingRequests = Gauge(label: "eventbus_pending_requests")

    /// `count` events were appended to `stage` and committed.
    mutating func appended(_ count: Int, stage: String) {
        guard count > 0 else { return }
        Self.counter(&appended, stage, "eventbus_events_appended_total", ("stage", stage)).increment(by: count)
    }

    /// `count` events were sent to the durable consumer `name`.
    mutating func delivered(_ count: Int, consumer name: String) {
        guard count > 0 else { return }
        Self.counter(&delivered, name, "eventbus_events_delivered_total", ("consumer", name)).increment(by: count)
    }

    /// An ERR with `code` was sent.
    mutating func rejected(_ code: ErrorCode) {
        Self.counter(&rejected, code, "eventbus_rejected_total", ("code", code.wire)).increment()
    }

    /// Events not appended again because they were in the dedup window.
    func dedup(_ hits: Int) {
        if hits > 0 { dedupHits.increment(by: hits) }
    }

    /// One fsync of the log took `nanoseconds`.
    func fsynced(nanoseconds: UInt64) {
        fsync.recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// A REQ for `service` ended with `outcome` (`ok`, `error`, `timeout`,
    /// `unknown_service`) after `milliseconds`.
    mutating func request(service: String, outcome: String, milliseconds: UInt64) {
        Self.counter(&requests, "\(service)\u{0}\(outcome)", "eventbus_requests_total",
                ("service", service), ("outcome", outcome)).increment()
        requestLatency.recordNanoseconds(Int64(clamping: milliseconds &* 1_000_000))
    }

    /// The durable consumer `name` has `events` after its last ACK.
    mutating func lag(_ events: Int, consumer name: String) {
        if let gauge = lag[name] {
            gauge.record(events)
        } else {
            let gauge = Gauge(label: "eventbus_consumer_lag", dimensions: [("consumer", name)])
            lag[name] = gauge
            gauge.record(events)
        }
    }

    /// The log's head SEQ and size, the stream's subscriptions and the REQs waiting.
    func state(headSeq seq: UInt64, logBytes bytes: UInt64, streamSubscriptions count: Int, pendingRequests waiting: Int) {
        headSeq.record(Int64(clamping: seq))
        logBytes.record(Int64(clamping: bytes))
        subscriptions.record(count)
        pendingRequests.record(waiting)
    }

    private static func counter<Key: Hashable>(_ table: inout [Key: Counter], _ key: Key, _ label: String,
                                        _ dimensions: (String, String)...) -> Counter {
        if let counter = table[key] { return counter }
        let counter = Counter(label: label, dimensions: dimensions)
        table[key] = counter
        return counter
    }
}
