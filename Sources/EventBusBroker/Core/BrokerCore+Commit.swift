import EventBus

/// Commit: making what was appended durable per the fsync policy, then
/// answering the PUBs it covers and routing its events (docs/architecture.md,
/// "Commit").
///
/// Under `--fsync always` the loop hands each group to the ``SyncWorker`` and
/// goes on: while an fsync runs, the next group gathers and starts its own
/// fsync soon after (up to ``SyncWorker/depth`` in flight, spaced by
/// ``SyncPacer``), and the loop keeps
/// receiving, appending and delivering what earlier commits covered. Groups
/// are released in the order they were taken, whatever order their fsyncs end
/// in. A group is a run of ``BrokerCore/unconfirmed``, ``BrokerCore/staged``
/// and ``BrokerCore/stagedRuns`` just after the groups before it: all three
/// are in append order, and a group's ticket was taken after its last append.
extension BrokerCore {
    /// What one commit covers: the next `confirms`, `records` and `runs` of the
    /// waiting PUBs, routed events and appended runs after the groups taken
    /// before it, up to SEQ `head`.
    struct CommitGroup: Equatable {
        let head: UInt64
        let confirms: Int
        let records: Int
        let runs: Int

        var isEmpty: Bool { confirms == 0 && records == 0 && runs == 0 }
    }

    /// A group whose fsync was handed to the sync worker, with its outcome once it came.
    struct InFlightCommit {
        let serial: UInt64
        let group: CommitGroup
        var outcome: SyncWorker.Outcome?
    }

    /// The group of everything appended since the groups in flight.
    var waitingGroup: CommitGroup {
        var confirms = unconfirmed.count, records = staged.count, runs = stagedRuns.count
        for commit in inFlight {
            confirms -= commit.group.confirms
            records -= commit.group.records
            runs -= commit.group.runs
        }
        return CommitGroup(head: log.headSeq, confirms: confirms, records: records, runs: runs)
    }

    /// Whether anything waits for a commit (in flight or not yet).
    var hasUncommitted: Bool { !stagedRuns.isEmpty || !unconfirmed.isEmpty }

    /// One step of the loop: under `always`, starts an fsync of what gathered
    /// since the last one when ``syncPacer`` allows (fewer than
    /// ``SyncWorker/depth`` in flight, spread over an fsync's duration); under
    /// the other policies, commits now.
    func advanceCommit() {
        guard let syncWorker else {
            commit()
            return
        }
        let now = clock.monotonicNanoseconds()
        guard fatal == nil, syncPacer.mayStart(now: now, inFlight: inFlight.count) else { return }
        let group = waitingGroup
        guard !group.isEmpty else { return }
        do {
            let serial = syncWorker.submit(try log.prepareSync())
            inFlight.append(InFlightCommit(serial: serial, group: group))
            syncPacer.started(now: now)
            #if EVENTBUS_MUTANTS
            if Mutant.active == .confirmBeforeFsync {
                // The waiting group's confirms are those after the groups in flight before it.
                for confirm in unconfirmed[confirmedEarly...] { sendConfirm(confirm) }
                confirmedEarly = unconfirmed.count
            }
            #endif
        } catch {
            stop(afterFailedSync: error)
        }
    }

    /// Milliseconds until a waiting group's fsync may start by the pacing alone, for
    /// the loop's poll timeout; nil when nothing waits for time.
    var commitDelayMilliseconds: Int? {
        guard syncWorker != nil, fatal == nil,
              let delay = syncPacer.delay(now: clock.monotonicNanoseconds(), inFlight: inFlight.count),
              !waitingGroup.isEmpty
        else { return nil }
        return Int((delay + 999_999) / 1_000_000)
    }

    /// Completes the fsyncs the worker finished, in the order they were taken:
    /// releases their groups, or stops the broker; then starts the next fsync of
    /// what gathered meanwhile, unless `startNext` is false (at close, once the
    /// worker has stopped).
    func finishCommits(startNext: Bool = true) {
        guard let syncWorker else { return }
        for outcome in syncWorker.takeOutcomes() {
            guard let index = inFlight.firstIndex(where: { $0.serial == outcome.serial }) else { continue }
            inFlight[index].outcome = outcome
        }
        // An fsync that ended before an earlier one waits for it: a later ticket
        // may not cover an earlier one's files (a segment rolled in between).
        while let first = inFlight.first, let outcome = first.outcome {
            inFlight.removeFirst()
            log.completeSync(outcome.ticket, failure: outcome.failure)
            if let failure = outcome.failure {
                stop(afterFailedSync: failure)
                return
            }
            metrics.fsynced(nanoseconds: outcome.nanoseconds)
            syncPacer.measured(nanoseconds: outcome.nanoseconds)
            timers.sync = clock.monotonicMilliseconds()
            release(first.group)
        }
        // What gathered during those fsyncs goes into the next at once.
        if startNext { advanceCommit() }
    }

    /// Makes everything appended durable per the fsync policy, on this
    /// thread, then answers the PUBs and routes the events; for shutdown and
    /// for tests that step the core. Not while a group is ``inFlight``.
    func commit() {
        guard hasUncommitted, inFlight.isEmpty else { return }
        let group = waitingGroup
        if config.fsync == .always {
            guard syncLog() else { return }
        }
        release(group)
    }

    /// Answers a committed group's PUBs and routes its events; consumers may then have them.
    private func release(_ group: CommitGroup) {
        let confirms = unconfirmed[..<group.confirms]
        #if EVENTBUS_MUTANTS
        let early = min(confirmedEarly, group.confirms)
        confirmedEarly -= early
        for confirm in confirms.dropFirst(early) { sendConfirm(confirm) }
        #else
        for confirm in confirms { sendConfirm(confirm) }
        #endif
        unconfirmed.removeFirst(group.confirms)
        for (stage, count) in stagedRuns[..<group.runs] {
            metrics.appended(count, stage: stage)
            statistics.published[stage, default: 0] += count
        }
        stagedRuns.removeFirst(group.runs)
        // Each record is moved out of `staged`: reading it in place and removing the run
        // afterwards copied it for `route` (a retain and a release of its topic and its event).
        for _ in 0..<group.records {
            // The group's records are the first `group.records` of `staged`.
            let record = staged.removeFirst()
            let stage = record.isOut ? Stage.out : Stage.diag
            if stage == Stage.diag { statistics.diagnostics[record.type, default: 0] += 1 }
            route(record, stage: stage)
        }
        visibleSeq = max(visibleSeq, group.head)
    }

    /// Forces the log to disk on this thread, whatever the policy asked for
    /// it; on failure stops the broker (``fatal``) and returns false.
    @discardableResult
    func syncLog() -> Bool {
        let started = clock.monotonicNanoseconds()
        do {
            try log.sync()
        } catch {
            stop(afterFailedSync: error)
            return false
        }
        metrics.fsynced(nanoseconds: clock.monotonicNanoseconds() - started)
        timers.sync = clock.monotonicMilliseconds()
        return true
    }

    /// After a failed fsync the kernel may have dropped the dirty pages and
    /// cleared the error ("fsyncgate"): nothing written since the last good
    /// sync can be trusted, a later fsync may succeed without it being on disk,
    /// and a confirm must never be sent for it. So every policy stops, as
    /// PostgreSQL does; the next start re-reads the log and re-syncs it.
    private func stop(afterFailedSync error: LogError) {
        logger.critical(
            "fsync of the log failed; stopping without confirming more, restart to recover the log",
            metadata: [
                "error.type": "\(error)", "bus.fsync": "\(config.fsync.rawValue)",
                "bus.durable_seq": "\(log.durableSeq)", "bus.head_seq": "\(log.headSeq)",
            ])
        fatal = BrokerError(.fsyncFailed, "fsync of the log failed: \(error)")
    }
}
