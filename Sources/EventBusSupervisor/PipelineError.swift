/// A pipeline that cannot run, found at start-up before anything runs.
public struct PipelineError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
