/// Why the checker could not run (not a broken rule: those are ``Violation``s).
public enum ChaosError: Error, CustomStringConvertible, Equatable {
    /// The model knows `receipt-reducer` followed by privacy filters only.
    case unsupportedPipeline([String])

    public var description: String {
        switch self {
        case .unsupportedPipeline(let names): "the model cannot run the pipeline \(names.joined(separator: ","))"
        }
    }
}
