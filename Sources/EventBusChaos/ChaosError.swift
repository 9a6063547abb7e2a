/// Why the campaign could not run a round (not a broken rule: those are ``Violation``s).
public enum ChaosError: Error, CustomStringConvertible, Equatable {
    /// The model knows `receipt-reducer` followed by privacy filters only.
    case unsupportedPipeline([String])
    /// A process, a file or the bus did not do what the round needed.
    case round(String)

    public var description: String {
        switch self {
        case .unsupportedPipeline(let names): "the model cannot run the pipeline \(names.joined(separator: ","))"
        case .round(let message): message
        }
    }
}
