import ArgumentParser

/// `eventbus-chaos`: the fault campaign of docs/reliability.md ("The fault campaign").
@main
struct EventBusChaosCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eventbus-chaos",
        abstract: "Rounds of eventbus up under one injected fault each, checked against an in-process model.",
        subcommands: [CampaignCommand.self, PublishCommand.self, HostileCommand.self, MutantCommand.self],
        defaultSubcommand: CampaignCommand.self
    )
}
