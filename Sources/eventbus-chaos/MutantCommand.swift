import ArgumentParser
import EventBusChaos
import EventBus
import Foundation
import Logging

/// `eventbus-chaos mutant NAME`: the checker, checked (docs/reliability.md). Runs rounds of the
/// mutant's fault against a deliberately broken build (``Mutant``; `EVENTBUS_BIN` names its
/// `eventbus`) until the checker reports the rule that mutant breaks. Exits 0 once it does,
/// 1 if no round caught it: a checker that passes a broken bus cannot be trusted with a good one.
struct MutantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mutant", abstract: "Run rounds against a broken build until the checker catches it.")

    @Argument(help: "The mutant: \(Mutant.allCases.map(\.rawValue).joined(separator: ", ")).")
    var name: String
    @Option(help: "Rounds of the mutant's fault to try at most.")
    var rounds = 4
    @Option(help: "The seed to start from; rounds of other faults are skipped.")
    var seed: UInt64 = 20_261_126
    @Option(help: "Workload events per round, setup included.")
    var events = 12_000
    @Option(help: "Publisher processes per round.")
    var publishers = 3
    @Option(help: "Where the rounds' directories go.")
    var root = FileManager.default.temporaryDirectory.path

    func validate() throws {
        if Mutant(rawValue: name) == nil { throw ValidationError("no mutant \(name); there are \(Mutant.allCases.map(\.rawValue))") }
        if rounds < 1 { throw ValidationError("--rounds must be at least 1") }
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .error
            return handler
        }
        guard let mutant = Mutant(rawValue: name) else { throw ExitCode(2) }
        // `eventbus up` and the plugins it starts inherit it.
        setenv("EVENTBUS_MUTANT", mutant.rawValue, 1)
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var settings = RoundSettings(events: events, publishers: publishers, root: URL(fileURLWithPath: root), executable: executable)
        // A disk whose fsyncs take 20 ms: long enough that a confirm sent before its fsync is
        // read by a publisher before the fsync ends, as on a slow or busy disk.
        if mutant == .confirmBeforeFsync { settings.fsyncDelayMicroseconds = 20_000 }
        print("eventbus-chaos mutant \(mutant.rawValue): up to \(rounds) rounds of \"\(mutant.fault)\" from seed \(seed), "
            + "until the checker reports a violation of \(mutant.rule)")
        var seed = self.seed
        var tried = 0
        var drawn = 0
        while tried < rounds {
            let plan = FaultPlan(seed: seed, publishers: publishers)
            seed = FaultPlan.nextSeed(after: seed)
            drawn += 1
            guard drawn <= 10_000 else { throw ValidationError("no seed draws \"\(mutant.fault)\"") }
            // The fault while the publishers still publish: a torn tail after the load has
            // drained finds everything durable, whatever the broker confirmed early.
            guard plan.fault.kind.hasPrefix(mutant.fault), plan.atMilliseconds <= 1_000 else { continue }
            tried += 1
            let report = try await ChaosRound(plan: plan, settings: settings).run()
            let caught = report.violations.filter { Self.breaks($0, mutant) }
            print("round \(tried) seed \(plan.seed) \(plan.fault)" + (report.note.map { " (\($0))" } ?? "")
                + ": \(report.confirmed) confirmed, \(report.violations.count) violations, \(caught.count) of \(mutant.rule)")
            ChaosRound.unmount(URL(fileURLWithPath: report.directory))
            try? FileManager.default.removeItem(atPath: report.directory)
            if let first = caught.first {
                print("caught: \(first)")
                return
            }
            for violation in report.violations.prefix(5) { print("  - \(violation)") }
        }
        print("mutant \(mutant.rawValue) was NOT caught in \(rounds) rounds: the checker misses what it breaks")
        throw ExitCode(1)
    }

    /// Whether `violation` is of the rule `mutant` breaks.
    static func breaks(_ violation: Violation, _ mutant: Mutant) -> Bool {
        switch (mutant, violation) {
        case (.confirmBeforeFsync, .confirmedEventMissing), (.dedupWindowZero, .duplicateIdentity),
            (.reducerSkipsWatermark, .outDiffers):
            true
        default:
            false
        }
    }
}
