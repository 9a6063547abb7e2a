/// One stage of the pipeline between `in` and `out`, and how its plugin runs.
public struct PipelineStage: Sendable, Equatable {
    /// How the stage's plugin is started.
    public enum Launch: Sendable, Equatable {
        /// `eventbus up` starts this executable (a built-in plugin or a configured command).
        case process(executable: String, arguments: [String])
        /// The plugin connects by itself (`external:NAME`); `eventbus up` only waits for it.
        case external
    }

    /// The plugin's name: its consumer name and the stage it publishes to.
    public let name: String
    /// How it is started.
    public let launch: Launch

    public init(name: String, launch: Launch) {
        self.name = name
        self.launch = launch
    }
}
