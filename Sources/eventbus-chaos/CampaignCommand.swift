import ArgumentParser
import EventBusChaos
import EventBusTesting
import Foundation
import Logging

/// `eventbus-chaos [run]`: rounds until `--minutes` are spent (or exactly `--rounds`), each
/// from its own seed; stops at the first round that breaks a rule, prints its violations and
/// the command that replays it, and keeps its directory.
struct CampaignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Run the fault campaign.")

    @Option(help: "Exactly this many rounds (default: as many as --minutes allow).")
    var rounds: Int?
    @Option(help: "The first round's seed (default: from the clock); each round prints its own.")
    var seed: UInt64?
    @Option(help: "Start no round after this many minutes.")
    var minutes: Double = 10
    @Option(help: "Workload events per round, setup included.")
    var events = 6_000
    @Option(help: "Publisher processes per round.")
    var publishers = 3
    @Option(help: "Only rounds whose fault's kind starts with this (\"torn\", \"kill -9 eventbus\", \"failing fsync\"…): the seeds of other rounds are skipped.")
    var fault: String?
    @Option(help: "Where the rounds' directories go.")
    var root = FileManager.default.temporaryDirectory.path

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = ProcessInfo.processInfo.environment["CHAOS_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
            return handler
        }
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let settings = RoundSettings(events: events, publishers: publishers, root: URL(fileURLWithPath: root), executable: executable)
        var seed = self.seed ?? UInt64(Date().timeIntervalSince1970 * 1000)
        let clock = RoundClock()
        var tally = CampaignTally()
        print("eventbus-chaos: seed \(seed), \(rounds.map { "\($0) rounds" } ?? "\(minutes) minutes"), \(events) events and \(publishers) publishers a round")
        while rounds.map({ tally.rounds < $0 }) ?? (clock.seconds < minutes * 60) {
            let plan = FaultPlan(seed: seed, publishers: publishers)
            if let fault, !plan.fault.kind.hasPrefix(fault) {
                seed = FaultPlan.nextSeed(after: seed)
                continue
            }
            let report: RoundReport
            do {
                let round = try ChaosRound(plan: plan, settings: settings)
                report = try await round.run()
            } catch {
                print("round \(tally.rounds + 1) (seed \(seed), \(plan.fault)) could not run: \(error)")
                print("its directory is kept: \(settings.root.appendingPathComponent("chaos-\(seed)").path)")
                print("replay: make chaos SEED=\(seed) ROUNDS=1")
                throw ExitCode(2)
            }
            tally.add(report)
            print(line(tally.rounds, report))
            fflush(nil)  // a round's line as it ends, also into a file
            if !report.violations.isEmpty {
                print("round \(tally.rounds) (seed \(seed)) FAILED, \(report.violations.count) violations:")
                for violation in report.violations.prefix(30) { print("  - \(violation)") }
                print("its directory is kept: \(report.directory)")
                print("replay: make chaos SEED=\(seed) ROUNDS=1")
                print(tally.table)
                throw ExitCode(1)
            }
            ChaosRound.unmount(URL(fileURLWithPath: report.directory))
            try? FileManager.default.removeItem(atPath: report.directory)
            seed = FaultPlan.nextSeed(after: seed)
        }
        print(tally.table)
    }

    private func line(_ number: Int, _ report: RoundReport) -> String {
        let recovery = report.recovery.map { String(format: "%.2f s", $0) } ?? "-"
        return "round \(number) seed \(report.plan.seed) [\(report.plan.pipeline.joined(separator: ","))] \(report.plan.fault)"
            + (report.note.map { " (\($0))" } ?? "")
            + ": \(report.confirmed) confirmed, in \(report.inEvents), out \(report.outEvents), "
            + "observer attached \(report.attachments)× (\(report.redelivered) sent again), recovery \(recovery), "
            + "confirm p99 \(report.confirmP99.map { String(format: "%.1f ms", $0) } ?? "-"), "
            + "up peak \(report.peakResident.map { String(format: "%.0f MiB", $0) } ?? "-")"
            + " (bound \(report.memoryBound.map { String(format: "%.0f MiB", $0) } ?? "-")), "
            + "\(String(format: "%.1f", report.seconds)) s, \(report.violations.isEmpty ? "ok" : "FAILED")"
    }
}
