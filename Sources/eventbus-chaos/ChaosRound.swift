import ChatWorkload
import EventBus
import EventBusChaos
import EventBusTesting
import Foundation
import Logging

/// One round of the campaign (docs/reliability.md, "The fault campaign"): `eventbus up` on a
/// fresh data directory, the round's workload from a few publisher processes, one fault, then
/// everything restarted and caught up, a few queries, a clean stop, and the checker over the
/// log as it is on disk.
final class ChaosRound {
    let plan: FaultPlan
    let settings: RoundSettings
    let directory: URL
    let up: UpProcess
    let share: PublisherShare
    let clock = RoundClock()
    let observer: OutObserver
    let client: BusClient
    var publishers: [RunningProcess?]
    /// The round's hostile peer (``HostileCommand``), from the publishers' start to their end.
    var hostile: RunningProcess?
    let logger = Logger(label: "eventbus.chaos")
    var note: String?
    /// Records the torn tail cut (nil: no torn tail this round).
    var tornRecords: Int?
    /// How long `eventbus up` took to exit after its disk started failing.
    var stopSeconds: Double?
    /// `eventbus up`'s peak resident bytes (`VmHWM`, its last run) just before the round's end.
    var peakBytes: Int?
    /// `eventbus up`'s resident bytes when its last run became ready.
    var readyResident: Int?

    init(plan: FaultPlan, settings: RoundSettings) throws {
        self.plan = plan
        self.settings = settings
        directory = settings.root.appendingPathComponent("chaos-\(plan.seed)")
        Self.unmount(directory)
        try? FileManager.default.removeItem(at: directory)
        if case .diskFull = plan.fault {
            // A disk of the bus's own, to fill: a tmpfs on its data directory (the campaign runs as
            // root, as `make test` does). The publishers' confirm files and the logs stay off it.
            let disk = Self.disk(in: directory)
            try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
            try Tmpfs.mount(at: disk.path, size: "\(Self.diskBytes / 1_048_576)m", mode: "0700")
        }
        var environment: [String: String] = [:]
        let failing: Bool
        if case .failingFsync = plan.fault { failing = true } else { failing = false }
        if failing || settings.fsyncDelayMicroseconds != nil {
            guard FileManager.default.fileExists(atPath: settings.fsyncShim) else {
                throw ChaosRunError("no \(settings.fsyncShim): build the product eventbus-chaos-fsync (make chaos does)")
            }
            environment["LD_PRELOAD"] = settings.fsyncShim
        }
        if failing { environment["EVENTBUS_CHAOS_FSYNC_FAIL"] = Self.fsyncTrigger(in: directory) }
        if let delay = settings.fsyncDelayMicroseconds { environment["EVENTBUS_FSYNC_DELAY_US"] = "\(delay)" }
        if case .clockJump = plan.fault { environment["EVENTBUS_CLOCK_SKEW_FILE"] = Self.clockSkewFile(in: directory) }
        up = try UpProcess(directory: directory, arguments: ["--pipeline", plan.pipeline.joined(separator: ",")], environment: environment)
        share = try PublisherShare(count: settings.events, seed: plan.workloadSeed)
        observer = OutObserver(endpoint: up.commandEndpoint, clock: clock)
        var quiet = Logger(label: "eventbus.chaos.client")
        quiet.logLevel = .error  // its reconnects are the faults at work
        client = try BusClient(options: .init(endpoint: up.commandEndpoint, name: "chaos", requestTimeout: .seconds(2), resendAfter: .seconds(1)),
                               logger: quiet)
        publishers = Array(repeating: nil, count: settings.publishers)
    }

    deinit { client.close() }

    /// The size of a disk-full round's filesystem: room for the round several times over.
    static let diskBytes = 512 * 1_048_576

    /// A disk-full round's filesystem: the bus's data directory (``UpProcess/dataDirectory``).
    static func disk(in directory: URL) -> URL { directory.appendingPathComponent("data") }

    /// Unmounts a disk-full round's filesystem, if the round has one (lazily: a process may still hold a file).
    static func unmount(_ directory: URL) {
        Tmpfs.unmount(Self.disk(in: directory).path)
    }

    /// The file whose existence makes every fsync of `eventbus up` and its plugins fail.
    var fsyncTrigger: String { Self.fsyncTrigger(in: directory) }

    static func fsyncTrigger(in directory: URL) -> String { directory.appendingPathComponent("fsync-fails").path }

    /// The file whose offset (ms) moves the wall clock of `eventbus up` in a clock-jump round.
    static func clockSkewFile(in directory: URL) -> String { directory.appendingPathComponent("clock-skew-ms").path }

    func confirmPath(_ index: Int) -> String { directory.appendingPathComponent("confirms-\(index)").path }

    func latencyPath(_ index: Int) -> String { directory.appendingPathComponent("latencies-\(index)").path }

    /// The p99 of the publishers' confirm latencies (a batch's, from its first send to its
    /// confirm, retries included), in milliseconds; nil without any.
    func confirmP99() -> Double? {
        var micros: [Int] = []
        for index in publishers.indices {
            let text = (try? String(contentsOfFile: latencyPath(index), encoding: .utf8)) ?? ""
            micros += text.split(separator: "\n").compactMap { Int($0) }
        }
        guard !micros.isEmpty else { return nil }
        micros.sort()
        return Double(micros[min(micros.count - 1, micros.count * 99 / 100)]) / 1_000
    }

    /// Starts `eventbus up` and notes what it holds once ready (``readyResident``).
    func startUp() async throws {
        try await up.start(within: .seconds(60))
        readyResident = upStatus("VmRSS")
    }

    /// A figure of `eventbus up`'s (last run's) /proc status, in bytes (`VmRSS`, `VmHWM`).
    func upStatus(_ field: String) -> Int? {
        up.process.flatMap { try? ProcessStatus.bytes(field, of: $0.processIdentifier) }
    }

    /// Runs the round and checks it; the directory stays unless the round passed.
    func run() async throws -> RoundReport {
        try await startUp()
        observer.start()
        var setupConfirms: [(line: Int, seq: UInt64)] = []
        for start in stride(from: 0, to: share.setupCount, by: 100) {
            let indices = Array(start..<min(share.setupCount, start + 100))
            let seqs = try await publishUntilConfirmed(indices.map { share.lines[$0] })
            setupConfirms += zip(indices, seqs).map { ($0, $1) }
        }
        for index in publishers.indices { try startPublisher(index) }
        hostile = try RunningProcess(
            settings.executable, ["hostile", "--endpoint", up.commandEndpoint, "--seed", String(plan.seed)],
            standardError: .file(directory.appendingPathComponent("hostile.stderr").path))
        try await Task.sleep(for: .milliseconds(plan.atMilliseconds))  // the fault's moment, drawn from the seed
        let recovery = try await inject(plan.fault)
        for index in publishers.indices {
            guard let process = publishers[index] else { continue }
            let status = try await process.exitStatus(within: .seconds(300))
            guard status == 0 else { throw ChaosRunError("publisher \(index) exited with \(status)") }
        }
        _ = try await hostile?.kill()
        try await awaitCaughtUp()
        let queries = try await askQueries()
        try await observer.stop()
        peakBytes = upStatus("VmHWM")
        let status = try await up.terminate()
        guard status == 0 else { throw ChaosRunError("eventbus up exited with \(status) on SIGTERM") }
        return try check(setupConfirms: setupConfirms, queries: queries, recovery: recovery)
    }

    private func publishUntilConfirmed(_ events: [[UInt8]]) async throws -> [UInt64] {
        while true {
            do {
                return try await client.publish(events)
            } catch {
                try await Task.sleep(for: .milliseconds(100))  // a retry's pause
            }
        }
    }

    func startPublisher(_ index: Int) throws {
        publishers[index] = try RunningProcess(
            settings.executable,
            ["publish", "--endpoint", up.commandEndpoint, "--seed", String(plan.workloadSeed), "--count", String(settings.events),
             "--index", String(index), "--publishers", String(settings.publishers), "--confirms", confirmPath(index),
             "--latencies", latencyPath(index)],
            standardError: .file(directory.appendingPathComponent("publisher-\(index).stderr").path))
    }

    /// Waits until every consumer (the plugins and the observer) has nothing left and the head
    /// stood still between two looks.
    private func awaitCaughtUp() async throws {
        let names = plan.pipeline + [OutObserver.name]
        var lastHead = -1
        var patience = Patience(.seconds(300))
        repeat {
            if let stats = await BusStats.read(client) {
                let idle = names.allSatisfy { stats.consumers[$0]?.lag == 0 }
                if idle, stats.headSeq == lastHead { return }
                lastHead = stats.headSeq
            }
            try await Task.sleep(for: .milliseconds(200))  // poll interval
        } while patience.allowsAnotherLook()
        throw ChaosRunError("the pipeline did not catch up within 300 s")
    }

    /// `channel_state` of three channels for a member, and `unread_counts` of two members of each.
    private func askQueries() async throws -> [QueryProbe] {
        var random = SplitMix64(seed: plan.seed ^ 0x7175_6572_79)  // "query"
        var channels: [(cid: String, members: [String])] = []
        for line in share.lines.prefix(share.setupCount) {
            guard let json = try? JSONParser.parse(line), json["type"]?.stringValue == "channel.created",
                  let cid = json["data"]?["cid"]?.stringValue, case .array(let members)? = json["data"]?["members"] else { continue }
            channels.append((cid, members.compactMap(\.stringValue)))
        }
        var probes: [QueryProbe] = []
        for _ in 0..<3 where !channels.isEmpty {
            let channel = channels[random.below(channels.count)]
            let viewer = channel.members[random.below(channel.members.count)]
            probes.append(try await ask("channel_state", #"{"cid":"\#(channel.cid)","viewer":"\#(viewer)"}"#))
            for user in channel.members.prefix(2) {
                probes.append(try await ask("unread_counts", #"{"user_id":"\#(user)"}"#))
            }
        }
        return probes
    }

    private func ask(_ method: String, _ params: String) async throws -> QueryProbe {
        let answer: JSONValue
        do {
            answer = try JSONParser.parse(try await client.request(service: "receipts", method: method, params: params))
        } catch let error as BusError {
            answer = .object([(key: "code", value: .string(error.code.wire)), (key: "message", value: .string(error.message))])
        }
        return QueryProbe(method: method, params: try JSONParser.parse(Array(params.utf8)), answer: answer)
    }
}
