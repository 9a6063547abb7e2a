import Foundation
import Logging
import NATS

/// Requests a cluster that just started may refuse for a while: a stream's replicas with
/// too few peers known yet ("no suitable peers", 10005), a KV bucket or the JetStream
/// API with no responder yet (`NATS_NO_RESPONDERS`) while its leader is elected, or
/// "JetStream system temporarily unavailable" (10008) during an election after a leader
/// was lost. Those answers are retried for ``wait``; any other error, or one past the
/// wait, is thrown.
///
/// Used where a process starts against the cluster (a plugin's lease and state, a
/// gateway's streams), so that `eventbus up --backend` right after
/// `eventbus cluster up` neither fails nor restarts its plugins for a cluster still
/// warming up.
enum ClusterWarmUp {
    /// How long a starting cluster may refuse.
    static let wait: Duration = .seconds(30)
    /// Between two tries.
    static let pause: TimeInterval = 0.25

    /// Whether `error` is an answer a cluster gives while it warms up. With `timeouts`, a
    /// request that got no answer in time is one too: a new stream's replicas elect their
    /// first leader before it answers, and on a cluster whose routes are still forming that
    /// election can outlast the request (seen in the partition tests' namespaces). Only for
    /// requests that may safely be made twice, since the first may have gone through.
    ///
    /// With `notFound`, "stream not found" is one too: for a request about a stream this
    /// process has just seen made (by itself or by a gateway starting beside it), whose
    /// replicas may not all know it yet (seen in the partition tests: 10059 on the
    /// `STREAM.INFO` right after the stream was added).
    static func isTransient(_ error: NATSError, timeouts: Bool = false, notFound: Bool = false) -> Bool {
        error.isNoPeers || error.isNoResponders || error.isTemporarilyUnavailable || (timeouts && error.isTimeout)
            || (notFound && error.isNotFound)
    }

    /// `body` given a context on `jetStream`'s connection whose calls each wait the next
    /// of ``CallWaits``' waits (short at first, doubling on each timeout), retried while it
    /// fails with a warm-up answer or a timeout, until `wait` is spent: a call lost in an
    /// election (4–9 s unanswered) is made again soon after it rather than after a whole
    /// request timeout. With no `wait` at all, one try on `jetStream` itself. For requests
    /// that may safely be made twice.
    static func retry<T>(_ what: String, on jetStream: JetStream, wait: Duration, notFound: Bool = false, logger: Logger? = nil,
                         _ body: (JetStream) throws(NATSError) -> T) throws(NATSError) -> T {
        var waits = CallWaits(budget: wait)
        let clock = ContinuousClock()
        let start = clock.now
        var lastError: NATSError?
        while let callWait = waits.nextWait(elapsed: clock.now - start) {
            do {
                return try body(try JetStream(connection: jetStream.connection, options: JetStreamOptions(requestTimeout: callWait)))
            } catch where isTransient(error, timeouts: true, notFound: notFound) {
                if lastError == nil {
                    logger?.info("the cluster is not ready for this yet; retrying", metadata: [
                        "nats.request": "\(what)", "error.type": "\(error)",
                    ])
                }
                lastError = error
                // Answered at once (no responder yet, no peers): not a spin.
                if !error.isTimeout { Thread.sleep(forTimeInterval: pause) }
            }
        }
        guard let lastError else { return try body(jetStream) }
        throw lastError
    }

    /// `body` on a handle of `bucket` made on a context of short waits, tried as
    /// ``retry(_:on:wait:notFound:logger:_:)`` tries (the handle's calls wait as the context it
    /// was made on does).
    static func retry<T>(_ what: String, bucket: String, on jetStream: JetStream, wait: Duration, logger: Logger? = nil,
                         _ body: (KeyValue) throws(NATSError) -> T) throws(NATSError) -> T {
        try retry(what, on: jetStream, wait: wait, logger: logger) { context throws(NATSError) in try body(context.keyValue(bucket)) }
    }

    /// The bucket of `config`, made when missing (again with the same configuration is
    /// harmless), each try with short waits; the handle returned is bound on `jetStream`
    /// itself, so that its later calls wait the whole request timeout.
    static func bucket(_ config: KeyValueConfig, on jetStream: JetStream, logger: Logger? = nil) throws(NATSError) -> KeyValue {
        _ = try retry("create bucket \(config.bucket)", on: jetStream, wait: wait, logger: logger) { context throws(NATSError) in
            try context.createKeyValue(config)
        }
        return try retry("bucket \(config.bucket)", timeouts: true, logger: logger) { () throws(NATSError) in
            try jetStream.keyValue(config.bucket)
        }
    }

    /// `body`, retried while it fails with a warm-up answer, for up to `wait`.
    static func retry<T>(_ what: String, wait: Duration = Self.wait, timeouts: Bool = false, notFound: Bool = false,
                         logger: Logger? = nil,
                         _ body: () throws(NATSError) -> T) throws(NATSError) -> T {
        let clock = ContinuousClock()
        let deadline = clock.now + wait
        var told = false
        while true {
            do {
                return try body()
            } catch where isTransient(error, timeouts: timeouts, notFound: notFound) && clock.now < deadline {
                if !told {
                    told = true
                    logger?.info("the cluster is not ready for this yet; retrying", metadata: [
                        "nats.request": "\(what)", "error.type": "\(error)",
                    ])
                }
                Thread.sleep(forTimeInterval: pause)
            }
        }
    }
}
