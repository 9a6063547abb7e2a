#if canImport(Glibc)
import Glibc
#endif
import DequeModule
import EventBus
import Logging
import ZeroMQ

/// The broker's state and rules, with no socket: it is handed each command
/// (``handle(_:userID:)``), sends through a ``BrokerOutput`` and reads time
/// from a ``BrokerClock``, so tests drive it with plain values. Owned by one
/// thread: the ``BrokerLoop``'s.
///
/// Each pass of the loop hands it every command waiting on the ROUTER
/// socket; it appends the PUB batches among them to the log, hands their
/// fsync to the ``SyncWorker`` unless one is in flight (group commit,
/// BrokerCore+Commit.swift), answers the PUBs and routes the events an fsync
/// completed since, and feeds the durable consumers.
final class BrokerCore {
    /// A PUB whose OK waits for the commit that covers it.
    struct PendingConfirm {
        let peer: [UInt8]
        let correlation: [UInt8]
        let seqs: [UInt64]
        /// All SEQs in one frame (the peer asked for `compact_ok` in HELLO).
        let compact: Bool
    }

    let config: BrokerConfig
    let logger: Logger
    /// Where replies, deliveries and the stream go: the loop's sockets, or a recording in tests.
    let output: any BrokerOutput
    let clock: any BrokerClock
    /// Roles and policy; `nil` when no keys are configured.
    let access: BrokerAccess?
    let log: SegmentLog
    /// Held while the broker lives: no second broker, nor `eventbus recover`, on its data.
    let dataLock: BrokerLock
    let offsetStore: OffsetStore
    let stageNames: Set<String>
    /// Each stage's `STAGE/` prefix of the events it may forward by reference.
    let predecessors: [String: [UInt8]]
    /// Distinguishes this run's request tokens from an earlier run's.
    let bootID: String

    // What the publish, commit and delivery paths touch per event is `@exclusivity(unchecked)`:
    // only the loop's thread reaches the core, and no method lends one of these properties
    // while another reaches it. The dynamic check a class's property gets otherwise (a begin
    // and an end of access, each looking up the thread's access set) cost about 130
    // instructions per access, 23 accesses per ack: 7 % of the broker's instructions.
    @exclusivity(unchecked) var index = StageIndex()
    @exclusivity(unchecked) var cache: RecordCache
    /// The topics of recent records, shared by the records that have the same one.
    @exclusivity(unchecked) var topics = TopicTable()
    @exclusivity(unchecked) var dedup: DedupWindow
    @exclusivity(unchecked) var consumers: [String: ConsumerState] = [:]
    var requests = PendingRequests()
    var services: Set<String>
    @exclusivity(unchecked) var statistics = BrokerStatistics()
    @exclusivity(unchecked) var metrics = BrokerMetrics()

    /// PUBs appended and not yet answered.
    @exclusivity(unchecked) var unconfirmed: [PendingConfirm] = []
    /// Events of `out` and `diag` appended and not yet routed; the commit moves each out
    /// from the front (no copy of its topic and event).
    @exclusivity(unchecked) var staged: Deque<RoutedRecord> = []
    /// Every append since the last commit, as runs of one stage each, in order.
    @exclusivity(unchecked) var stagedRuns: [(stage: String, count: Int)] = []
    /// Every event up to this SEQ is committed and routed.
    @exclusivity(unchecked) var visibleSeq: UInt64
    /// Performs the fsyncs of policy `always` off the loop's thread; `nil` under the other policies.
    let syncWorker: SyncWorker?
    /// The commits whose fsyncs are in flight on ``syncWorker``, in the order taken.
    @exclusivity(unchecked) var inFlight: [InFlightCommit] = []
    #if EVENTBUS_MUTANTS
    /// Leading entries of ``unconfirmed`` whose confirms went out before their fsync
    /// (``Mutant/confirmBeforeFsync``).
    var confirmedEarly = 0
    #endif
    /// When the next fsync may start while others run.
    var syncPacer = SyncPacer(depth: 1)
    var requestCounter: UInt64 = 0
    @exclusivity(unchecked) var offsetsDirty = false
    var consumersBlocked = false
    /// Events of `out` withheld from its consumers (private types, queries, replies).
    @exclusivity(unchecked) var withheldOut = 0
    /// Set when the broker must stop because the log can no longer be trusted.
    var fatal: BrokerError?
    /// Set by ``close()``, which does its work once.
    private(set) var isClosed = false
    var timers = Timers()
    /// Peers that asked for batched delivery (`"batch": true` in `HELLO`).
    @exclusivity(unchecked) var batchPeers: Set<[UInt8]> = []
    /// Peers that asked for a PUB's OK in one frame (`"compact_ok": true` in `HELLO`).
    @exclusivity(unchecked) var compactPeers: Set<[UInt8]> = []
    /// Peers that asked for ordered publishing (`"ordered": true` in `HELLO`).
    @exclusivity(unchecked) var orderedPeers: Set<[UInt8]> = []
    /// For an ordered peer whose PUB was refused `busy`: that PUB's first event, the one its
    /// next PUB must begin with (docs/protocol.md, "Ordered publishing").
    @exclusivity(unchecked) var refusedFirst: [[UInt8]: DedupKey] = [:]
    /// The records of the delivery being assembled (kept to reuse its storage).
    @exclusivity(unchecked) var outgoing: [RoutedRecord] = []
    /// Identities of the PUB being handled, with their place in its batch.
    @exclusivity(unchecked) var batchKeys = FingerprintTable(capacity: 2 * WireProtocol.maxBatchEvents)
    /// Room to write a SEQ in decimal.
    let decimalScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 24, alignment: 1)

    struct Timers {
        var offsets: UInt64 = 0
        var sync: UInt64 = 0
        var retention: UInt64 = 0
        var requests: UInt64 = 0
        var dedup: UInt64 = 0
        var metrics: UInt64 = 0
    }

    deinit { decimalScratch.deallocate() }

    /// Opens the log under the data directory (refusing one that ends before what
    /// consumers or snapshots have seen) and rebuilds the state from it.
    init(config: BrokerConfig, logger: Logger, output: any BrokerOutput, clock: any BrokerClock = BrokerClocks.fromEnvironment()) throws {
        self.config = config
        self.logger = logger
        self.output = output
        self.clock = clock
        access = config.security.map { BrokerAccess(config: $0, pipeline: config.pipeline) }
        stageNames = Set(config.stages)
        predecessors = Self.predecessors(pipeline: config.pipeline)
        services = Set(config.services)
        bootID = String(clock.wallMilliseconds(), radix: 36)
        cache = RecordCache(capacityBytes: config.cacheBytes)
        dedup = DedupWindow(ageMilliseconds: UInt64(config.dedupWindowSeconds * 1_000),
                            minimumCount: config.dedupMinimumIDs,
                            maximumCount: max(config.dedupMinimumIDs, config.dedupMaximumIDs))

        var options = LogOptions()
        options.segmentBytes = config.segmentBytes
        options.retentionBytes = config.retentionBytes
        options.retentionAge = config.retentionAge
        dataLock = try BrokerLock(directory: config.dataDirectory)
        log = try SegmentLog(directory: config.dataDirectory, options: options, logger: logger)
        offsetStore = try OffsetStore(directory: config.dataDirectory, logger: logger)
        // A log that ends before what consumers or snapshots have seen lost records: serving
        // would give their SEQs again (docs/operations.md, "Records lost mid-log").
        let offsets = offsetStore.load()
        let references = LogReferences(offsets: offsets, dataDirectory: config.dataDirectory)
        if let refusal = references.refusal(headSeq: log.headSeq, dataDirectory: config.dataDirectory, recovery: log.recovery) {
            log.close()
            throw refusal
        }
        visibleSeq = log.headSeq
        syncWorker = config.fsync == .always ? try SyncWorker() : nil
        syncPacer = SyncPacer(depth: syncWorker?.depth ?? 1)
        try rebuild(offsets: offsets)
    }

    /// Rebuilds the indexes, the cache, the dedup window and, from their saved `offsets`, the consumers.
    private func rebuild(offsets: [String: UInt64]) throws {
        for (name, acked) in offsets {
            let consumer = ConsumerState(name: name, acked: acked)
            consumer.nextSeq = acked + 1
            consumers[name] = consumer
        }
        let now = clock.wallMilliseconds()
        let dedupFrom = log.headSeq > UInt64(dedup.maximumCount) ? log.headSeq - UInt64(dedup.maximumCount) + 1 : 1
        try log.scan(from: log.firstSeq) { record in
            let routed = RoutedRecord(seq: record.seq, topic: record.topic, event: record.event)
            let stage = routed.stage
            indexRecord(routed, stage: stage)
            cache.append(routed)
            if record.seq >= dedupFrom {
                dedup.insert(DedupKey(stage: stage.utf8, source: record.source, id: record.id),
                             seq: record.seq, timestamp: record.timestamp)
            }
            return true
        }
        dedup.expire(now: now)
        logger.info("log opened", metadata: [
            "bus.first_seq": "\(log.firstSeq)", "bus.head_seq": "\(log.headSeq)",
            "bus.segments": "\(log.segmentCount)", "bus.consumers": "\(consumers.count)",
        ])
    }

    /// Ends the fsync in flight, then, unless a failed fsync stopped the broker,
    /// commits what is left, saves the offsets and closes the log; releases the
    /// data directory. After a failed fsync nothing more is written: the next
    /// start recovers the log.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        if let syncWorker {
            syncWorker.stop()
            finishCommits(startNext: false)
        }
        if fatal == nil { commit() }
        if fatal == nil {
            saveOffsets()
            if syncLog() { log.close() }
        }
        dataLock.release()
    }

    // MARK: Routing

    /// Indexes a record for its stage's consumers. Events of `out` that never
    /// leave the broker (private types, `query`, `reply`) are only counted, so
    /// that consumers of `out` neither scan them nor see them as lag.
    func indexRecord(_ record: RoutedRecord, stage: String) {
        if stage == Stage.out && !record.isStreamable {
            withheldOut += 1
        } else {
            index.append(stage: stage, seq: record.seq)
        }
    }

    /// Sends an `out` or `diag` event to the stream, or a `reply` to its requester.
    func route(_ record: RoutedRecord, stage: String) {
        if stage == Stage.out && record.hasType(Self.replyType) {
            deliverReply(record)
            return
        }
        if stage == Stage.out && record.hasType(Self.queryType) {
            answerUnservedQuery(record)
            return
        }
        guard record.isStreamable else { return }
        publishToStream(record)
    }

    static let replyType = Array(EventType.reply.rawValue.utf8)
    static let queryType = Array(EventType.query.rawValue.utf8)
    /// The types that never leave the broker: `query`, `reply` and the private ones.
    static let withheldTypes = TypeNameSet([queryType, replyType]
        + EventType.allCases.filter(\.isPrivate).map { Array($0.rawValue.utf8) })

    /// Whether events of `type` may leave the broker on the stream or to `out`
    /// consumers; compared as bytes, on the delivery path.
    static func isStreamable(type: UnsafeBufferPointer<UInt8>) -> Bool {
        !withheldTypes.contains(type)
    }

    // MARK: Replies

    func reply(to peer: [UInt8], correlation: [UInt8], _ frames: [[UInt8]]) {
        send(to: peer, [WireProtocol.signature, Verb.ok.bytes, correlation] + frames)
    }

    func sendError(to peer: [UInt8], correlation: [UInt8], _ error: BusError) {
        statistics.rejected[error.code, default: 0] += 1
        metrics.rejected(error.code)
        logger.debug("refused", metadata: ["bus.code": "\(error.code.wire)", "bus.message": "\(error.message)"])
        send(to: peer, [WireProtocol.signature, Verb.err.bytes, correlation, Array(error.code.wire.utf8), Array(error.message.utf8)])
    }

    /// Sends to a peer; returns false when it could not be queued.
    @discardableResult
    func send(to peer: [UInt8], _ frames: [[UInt8]]) -> Bool {
        do {
            if try output.send(to: peer, frames) { return true }
            statistics.droppedReplies += 1
            return false
        } catch {
            sendFailed(to: peer, error)
            return false
        }
    }

    /// A send to `peer` failed: a peer that is gone loses its consumers; anything else is logged.
    func sendFailed(to peer: [UInt8], _ error: ZMQError) {
        if error.code == EHOSTUNREACH { peerGone(peer) } else {
            logger.warning("send failed", metadata: ["error.type": "\(error)"])
        }
    }

    /// A peer is no longer connected: its consumers stop and will resend from their ACK.
    func peerGone(_ peer: [UInt8]) {
        batchPeers.remove(peer)
        compactPeers.remove(peer)
        orderedPeers.remove(peer)
        refusedFirst[peer] = nil
        for consumer in consumers.values where consumer.peer == peer {
            consumer.peer = nil
            consumer.rewind(to: consumer.acked + 1)
        }
    }

    // MARK: Timers

    /// Request timeouts, offsets, periodic fsync, gauges, dedup expiry and retention, each when due.
    func runTimers() {
        let now = clock.monotonicMilliseconds()
        if now - timers.requests >= 10 {
            timers.requests = now
            for request in requests.expire(now: now) {
                metrics.request(service: request.service, outcome: "timeout", milliseconds: now - request.started)
                sendError(to: request.peer, correlation: request.correlation,
                          BusError(.timeout, "service \(request.service) did not answer within \(config.requestTimeoutMilliseconds) ms"))
            }
        }
        if offsetsDirty && now - timers.offsets >= 200 {
            timers.offsets = now
            saveOffsets()
        }
        if config.fsync == .periodic && log.durableSeq < log.headSeq
            && now - timers.sync >= UInt64(config.fsyncIntervalMilliseconds) {
            guard syncLog() else { return }
        }
        if now - timers.metrics >= 1_000 {
            timers.metrics = now
            updateGauges()
        }
        if now - timers.dedup >= 1_000 {
            timers.dedup = now
            dedup.expire(now: clock.wallMilliseconds())
        }
        if (config.retentionAge != nil || config.retentionBytes != nil) && now - timers.retention >= 5_000 {
            timers.retention = now
            applyRetention()
        }
    }

    /// Refreshes the metrics that are levels rather than counts.
    private func updateGauges() {
        for consumer in consumers.values { metrics.lag(lag(of: consumer), consumer: consumer.name) }
        metrics.state(headSeq: log.headSeq, logBytes: log.totalBytes,
                      streamSubscriptions: statistics.streamSubscriptions, pendingRequests: requests.count)
    }

    func saveOffsets() {
        guard offsetsDirty else { return }
        do {
            try offsetStore.save(consumers.mapValues(\.acked))
            offsetsDirty = false
        } catch {
            logger.error("saving consumer offsets failed", metadata: ["error.type": "\(error)"])
        }
    }

    private func applyRetention() {
        do {
            let removed = try log.enforceRetention(now: clock.wallMilliseconds())
            guard removed > 0 else { return }
            index.trim(below: log.firstSeq)
            for consumer in consumers.values where consumer.nextSeq < log.firstSeq {
                consumer.nextSeq = log.firstSeq
            }
            logger.info("retention removed segments", metadata: ["bus.segments": "\(removed)", "bus.first_seq": "\(log.firstSeq)"])
        } catch {
            logger.error("retention failed", metadata: ["error.type": "\(error)"])
        }
    }
}
