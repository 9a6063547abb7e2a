import ArgumentParser
import EventBusBroker
import Logging

/// `eventbus recover`: lets a broker serve again a log that lost records which consumers or
/// plugin snapshots had already seen, without giving any SEQ twice (docs/operations.md).
struct RecoverCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover",
        abstract: "Mark the SEQs a damaged log lost, so that the broker serves again without reusing a SEQ.",
        discussion: """
            Run it, with no broker on DIR, when the broker refuses to start because the log ends before \
            what a consumer or a plugin snapshot has seen. Each lost SEQ gets a record on stage diag \
            (type log.records_lost); new events continue after the highest SEQ anything has seen. Keep \
            a copy of DIR first: the lost events are gone, and backends may need to publish them again.
            """)

    @Option(help: ArgumentHelp("The broker's data directory.", valueName: "DIR"))
    var dataDir: String = ".eventbus"

    func run() throws {
        let logger = CLILogging.logger("eventbus.recover", level: .warning)
        let outcome: LostRecords.Outcome
        do {
            outcome = try LostRecords.recover(dataDirectory: dataDir, logger: logger)
        } catch {
            Output.stderr("error: cannot recover \(dataDir): \(error.message)\n")
            throw ExitCode(ExitStatus.of(error))
        }
        if let marked = outcome.marked {
            Output.line("marked SEQs \(marked.lowerBound)…\(marked.upperBound) as lost; new events continue at SEQ \(outcome.headSeq + 1)")
        } else {
            Output.line("nothing to recover: the log ends at SEQ \(outcome.headSeq) and nothing has seen past it")
        }
    }
}
