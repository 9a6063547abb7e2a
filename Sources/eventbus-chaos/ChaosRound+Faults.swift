import EventBusChaos
import EventBusTesting
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension ChaosRound {
    /// Injects `fault`, restarts what the supervisor does not, and returns how long the
    /// pipeline took to move again (``awaitRecovery``).
    func inject(_ fault: Fault) async throws -> Double? {
        logger.info("fault", metadata: ["round": "\(plan.seed)", "fault": "\(fault)"])
        switch fault {
        case .kill(.supervisor):
            let at = clock.seconds
            try await up.kill()
            observer.note(.brokerCrashed(from: at, to: at))
            try await startUp()
            return try await awaitRecovery(since: at)
        case .kill(.plugin(let name)):
            let at = clock.seconds
            signal(pids(of: name), SIGKILL)
            return try await awaitRecovery(since: at)
        case .kill(.publisher(let index)):
            guard let process = publishers[index], process.isRunning else { return nil }
            let at = clock.seconds
            try await process.kill()
            try startPublisher(index)
            return try await awaitRecovery(since: at)
        case .stop(let target, let milliseconds):
            let pids: [pid_t]
            switch target {
            case .supervisor: pids = up.process.map { [$0.processIdentifier] } ?? []
            case .plugin(let name): pids = self.pids(of: name)
            case .publisher(let index): pids = publishers[index].flatMap { $0.isRunning ? [$0.processIdentifier] : nil } ?? []
            }
            guard !pids.isEmpty else { return nil }
            signal(pids, SIGSTOP)
            try await Task.sleep(for: .milliseconds(milliseconds))  // how long the fault keeps it stopped
            let at = clock.seconds
            signal(pids, SIGCONT)
            return try await awaitRecovery(since: at)
        case .tornTail(let fraction):
            return try await tearTail(at: fraction)
        case .failingFsync(let fraction):
            return try await failFsync(keeping: fraction)
        case .diskFull(let milliseconds):
            return try await fillDisk(for: milliseconds)
        case .clockJump(let seconds):
            let at = clock.seconds
            try String(seconds * 1_000).write(toFile: Self.clockSkewFile(in: directory), atomically: true, encoding: .utf8)
            return try await awaitRecovery(since: at)
        }
    }

    /// Fills the round's filesystem with a file of zeros up to ENOSPC, keeps it full for
    /// `milliseconds`, deletes the file, and waits for the pipeline to move again. The broker
    /// answers `busy` meanwhile (docs/protocol.md): the publishers retry the same events.
    private func fillDisk(for milliseconds: Int) async throws -> Double? {
        let path = Self.disk(in: directory).appendingPathComponent(".chaos-filler").path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw ChaosRunError("disk full: cannot create \(path), errno \(errno)") }
        let chunk = [UInt8](repeating: 0, count: 1 << 20)
        var filled = 0
        while true {
            let written = chunk.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written <= 0 { break }
            filled += written
        }
        let full = errno
        close(fd)
        guard full == ENOSPC else { throw ChaosRunError("disk full: the filler stopped with errno \(full), not ENOSPC") }
        try await Task.sleep(for: .milliseconds(milliseconds))  // how long the fault keeps the disk full
        try FileManager.default.removeItem(atPath: path)
        let at = clock.seconds
        // What the fault did: the broker logs each append the full disk refused (`busy`).
        let refused = up.log.components(separatedBy: "log append failed").count - 1
        note = "\(filled / 1_048_576) MiB filler, \(refused) appends refused"
        return try await awaitRecovery(since: at)
    }

    /// Makes every fsync fail until the broker stops on one (20 s at most: a pipeline with
    /// nothing left to sync may never notice), waits for `eventbus up` to exit (60 s at most,
    /// then SIGKILL), checks it exits 1 (docs/operations.md, "Exit statuses") having logged its
    /// `durable_seq`, drops the pages written after that record as a kernel may after a
    /// failed fsync, and starts it again on a good disk.
    ///
    /// Nothing past `durable_seq` was confirmed or delivered to anyone (a confirm and a delivery
    /// follow the fsync that covers them), so the cut loses nothing a client saw.
    private func failFsync(keeping fraction: Double) async throws -> Double? {
        guard let process = up.process else { return nil }
        let at = clock.seconds
        guard FileManager.default.createFile(atPath: fsyncTrigger, contents: nil) else { throw ChaosRunError("cannot create \(fsyncTrigger)") }
        var patience = Patience(.seconds(20))
        var durable = Self.loggedDurableSeq(up.log)
        while durable == nil, process.isRunning, patience.allowsAnotherLook() {
            try await Task.sleep(for: .milliseconds(20))  // poll interval
            durable = Self.loggedDurableSeq(up.log)
        }
        guard durable != nil || !process.isRunning else {
            try FileManager.default.removeItem(atPath: fsyncTrigger)
            note = "no fsync within 20 s: nothing failed"
            return nil
        }
        let status: Int32
        do {
            status = try await process.exitStatus(within: .seconds(60))
        } catch {
            try await up.kill()
            throw ChaosRunError("eventbus up still ran 60 s after its broker stopped on a failed fsync; killed")
        }
        try FileManager.default.removeItem(atPath: fsyncTrigger)
        stopSeconds = clock.seconds - at
        observer.note(.brokerCrashed(from: at, to: clock.seconds))
        guard status == 1 else { throw ChaosRunError("eventbus up exited with \(status) after a failed fsync, not 1 (docs/operations.md)") }
        guard let durable = Self.loggedDurableSeq(up.log) else {
            throw ChaosRunError("eventbus up stopped after a failed fsync without logging bus.durable_seq")
        }
        try await awaitPluginsGone()
        note = String(format: "fsync failed, up exited in %.1f s; ", stopSeconds ?? 0) + (try cut(after: durable, fraction: fraction))
        try await startUp()
        return try await awaitRecovery(since: at)
    }

    /// The `bus.durable_seq` of the broker's last "fsync of the log failed" line.
    static func loggedDurableSeq(_ log: String) -> UInt64? {
        guard let line = log.split(separator: "\n").last(where: { $0.contains("fsync of the log failed") && $0.contains("bus.durable_seq=") }),
              let range = line.range(of: "bus.durable_seq=") else { return nil }
        return UInt64(line[range.upperBound...].prefix { $0.isNumber })
    }

    /// A power loss: freeze every client (publishers, plugins, the observer) so that nothing
    /// the broker confirms from now on reaches anyone, read `durable_seq`, SIGKILL the whole
    /// tree, cut the last segment somewhere past the end of the last durable record, and
    /// start everything again.
    ///
    /// Every confirm a client took was sent before the freeze, so it is at or below the
    /// `durable_seq` read after it (a confirm follows the fsync that covers it): the cut
    /// never takes a confirmed record, nor one a plugin, a consumer offset or the observer saw.
    private func tearTail(at fraction: Double) async throws -> Double? {
        await observer.pause()
        let clients = publishers.compactMap { $0?.isRunning == true ? $0?.processIdentifier : nil }
            + plan.pipeline.flatMap { pids(of: $0) }
        signal(clients, SIGSTOP)
        guard let stats = await BusStats.read(client) else { throw ChaosRunError("torn tail: no STATS before the kill") }
        let at = clock.seconds
        try await up.kill()
        observer.note(.brokerCrashed(from: at, to: at))
        signal(clients, SIGKILL)
        for index in publishers.indices { _ = try await publishers[index]?.exitStatus(within: .seconds(10)) }
        try await awaitPluginsGone()
        note = try cut(after: UInt64(stats.durableSeq), fraction: fraction)
        try await startUp()
        for index in publishers.indices { try startPublisher(index) }
        observer.resume()
        return try await awaitRecovery(since: at)
    }

    /// Truncates the last segment at `fraction` of the bytes past the end of record `durable`
    /// (past its header, if `durable` is in an older segment); what it did, for the report.
    private func cut(after durable: UInt64, fraction: Double) throws -> String {
        let logDirectory = up.dataDirectory + "/log"
        guard let path = try SegmentScanner.segmentPaths(in: logDirectory).last else { throw ChaosRunError("torn tail: no segment") }
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let contents = SegmentScanner.contents(of: bytes)
        let start = contents.extents.last { $0.seq <= durable }?.end ?? SegmentScanner.headerSize
        tornRecords = 0
        guard start < bytes.count else { return "nothing past durable SEQ \(durable) to tear" }
        let offset = start + Int(fraction * Double(bytes.count - start))
        guard truncate(path, off_t(offset)) == 0 else { throw ChaosRunError("torn tail: truncate \(path) failed, errno \(errno)") }
        let lost = contents.extents.filter { $0.end > offset }.count
        tornRecords = lost
        return "cut \(bytes.count - offset) bytes (\(lost) records) past durable SEQ \(durable)"
    }

    /// Waits until no plugin process of this data directory is left (they die with `eventbus up`).
    private func awaitPluginsGone() async throws {
        var patience = Patience(.seconds(20))
        repeat {
            if up.pluginProcesses().isEmpty { return }
            try await Task.sleep(for: .milliseconds(20))  // poll interval
        } while patience.allowsAnotherLook()
        throw ChaosRunError("plugins still run 20 s after eventbus up was killed")
    }

    func pids(of plugin: String) -> [pid_t] { up.pluginProcesses()[plugin] ?? [] }

    func signal(_ pids: [pid_t], _ signal: Int32) {
        for pid in pids { Foundation.kill(pid, signal) }
    }

    /// How long, from `since`, until the pipeline moves again: the broker answers, every plugin
    /// of the pipeline has a process and a connected consumer, and each has either nothing left
    /// (lag 0) or ACKed past where it stood at the first answer.
    func awaitRecovery(since: Double) async throws -> Double {
        var first: [String: Int]?
        var patience = Patience(.seconds(120))
        repeat {
            if let stats = await BusStats.read(client) {
                let running = up.pluginProcesses()
                let start = first ?? Dictionary(uniqueKeysWithValues: plan.pipeline.map { ($0, stats.consumers[$0]?.acked ?? 0) })
                first = start
                let moving = plan.pipeline.allSatisfy { name in
                    guard let consumer = stats.consumers[name], consumer.connected, running[name]?.isEmpty == false else { return false }
                    return consumer.lag == 0 || consumer.acked > start[name] ?? 0
                }
                if moving { return clock.seconds - since }
            }
            try await Task.sleep(for: .milliseconds(20))  // poll interval
        } while patience.allowsAnotherLook()
        throw ChaosRunError("the pipeline did not move again within 120 s of the fault")
    }
}
