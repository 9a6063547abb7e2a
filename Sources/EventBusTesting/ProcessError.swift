/// A helper's failure: a process that exited, did not start, or did not answer in time.
/// Tests let it propagate, which fails the test with this description.
public struct ProcessError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}
