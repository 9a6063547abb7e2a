import ArgumentParser
import EventBusBroker

/// The `eventbus` command: the broker and the tools that talk to it.
@main
struct EventBusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eventbus",
        abstract: "A ZeroMQ event bus for chat receipts: the broker and its command-line tools.",
        version: BrokerVersion.string,
        subcommands: [
            UpCommand.self, BrokerCommand.self, PublishCommand.self, TailCommand.self,
            QueryCommand.self, StatsCommand.self, DemoCommand.self, KeygenCommand.self, RecoverCommand.self,
            ClusterCommand.self, GatewayCommand.self,
        ]
    )
}
