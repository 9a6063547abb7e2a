import ArgumentParser

/// A plugin executable's command line as a command named after the executable, so that
/// its usage and `--help` name the plugin (`USAGE: read-privacy [--name <NAME>] …`).
struct PluginCommandLine<Options: PluginArguments>: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: executableName,
            abstract: "An eventbus plugin: consumes its input stage and publishes to its output stage (docs/plugins.md).")
    }

    /// The executable's file name, as it was started.
    static var executableName: String {
        CommandLine.arguments.first.flatMap { $0.split(separator: "/").last }.map(String.init) ?? "plugin"
    }

    @OptionGroup var options: Options

    /// What a command line that is not run ends with: the text to print, and the exit
    /// status (0 for `--help`, 2 for a usage error).
    struct Exit: Error {
        let message: String
        let status: Int32
    }

    /// Parses `arguments` (without the executable's name).
    static func read(_ arguments: [String]) -> Result<Options, Exit> {
        do {
            return .success(try parse(arguments).options)
        } catch {
            let help = exitCode(for: error) == .success
            return .failure(Exit(message: fullMessage(for: error), status: help ? 0 : 2))
        }
    }
}
