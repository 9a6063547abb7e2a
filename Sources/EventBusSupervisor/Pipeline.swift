import EventBus
import Foundation
import Yams

/// The ordered stages between `in` and `out`, validated.
///
/// Built from `--pipeline a,b,external:c` or from the `pipeline:` list of a
/// YAML config file. Names must be `[a-z0-9_-]{1,64}`, not `in`, `out` or
/// `diag`, and appear once (a name twice would make the pipeline feed itself);
/// a plugin that is neither external nor configured with a command must exist
/// as an executable of that name in the plugin directory.
public struct Pipeline: Sendable, Equatable {
    /// The default: the reducer, then both privacy filters.
    public static let defaultNames = ["receipt-reducer", "read-privacy", "delivery-privacy"]

    /// The stages in order.
    public let stages: [PipelineStage]

    /// Validates `stages`.
    public init(stages: [PipelineStage]) throws(PipelineError) {
        var seen: Set<String> = []
        for stage in stages {
            guard Stage.isValidName(stage.name) else {
                throw PipelineError(.pipeline, "pipeline stage \"\(stage.name)\": a name must match [a-z0-9_-]{1,64} and not be in, out or diag")
            }
            guard seen.insert(stage.name).inserted else {
                throw PipelineError(.pipeline, "pipeline stage \"\(stage.name)\" appears twice: a stage would consume its own output (a cycle)")
            }
        }
        self.stages = stages
    }

    /// The stage names, in order.
    public var names: [String] { stages.map(\.name) }

    /// The stage plugin `index` consumes.
    public func input(of index: Int) -> String { index == 0 ? Stage.in : stages[index - 1].name }

    /// The stage plugin `index` publishes to.
    public func output(of index: Int) -> String { index == stages.count - 1 ? Stage.out : stages[index].name }

    /// Parses `a,b,external:c`; a bare name is a built-in plugin found in
    /// `pluginDirectory`, or, with no directory (the broker alone, plugins run
    /// elsewhere), just a stage name.
    public static func parse(list: String, pluginDirectory: String?) throws(PipelineError) -> Pipeline {
        let entries = list.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard !entries.contains(where: \.isEmpty) else {
            throw PipelineError(.pipeline, "--pipeline \"\(list)\": an entry is empty")
        }
        var stages: [PipelineStage] = []
        for entry in entries {
            if entry.hasPrefix("external:") {
                stages.append(PipelineStage(name: String(entry.dropFirst("external:".count)), launch: .external))
            } else if pluginDirectory == nil {
                stages.append(PipelineStage(name: entry, launch: .external))
            } else if let pluginDirectory {
                stages.append(PipelineStage(name: entry, launch: .process(executable: try builtin(entry, in: pluginDirectory), arguments: [])))
            }
        }
        return try Pipeline(stages: stages)
    }

    /// The executable of the built-in plugin `name`.
    static func builtin(_ name: String, in directory: String) throws(PipelineError) -> String {
        guard Stage.isValidName(name) else {
            throw PipelineError(.pipeline, "pipeline stage \"\(name)\": a name must match [a-z0-9_-]{1,64} and not be in, out or diag")
        }
        let path = directory + "/" + name
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw PipelineError(.pipeline, "unknown plugin \"\(name)\": no executable \(path); give it a command in the config file, or use external:\(name) for a plugin that connects by itself")
        }
        return path
    }
}
