/// A pipeline that cannot run, found at start-up before anything runs.
public struct PipelineError: Error, Sendable, CustomStringConvertible {
    /// Where the problem is.
    public enum Code: String, Sendable, Equatable {
        /// `--pipeline` or the config file's `pipeline:` names a stage wrongly, twice, or a plugin that is not there.
        case pipeline
        /// The config file (`eventbus up --config`) cannot be read or has a wrong key or value.
        case configFile = "config_file"
        /// The security file cannot be read or has a wrong key or value.
        case securityFile = "security_file"
    }

    public let code: Code
    public let description: String
    /// An error with its code and a sentence saying what is wrong.
    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
