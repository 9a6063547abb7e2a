/// A process of a round that a fault may hit.
public enum FaultTarget: Sendable, Equatable, CustomStringConvertible {
    /// `eventbus up`: the supervisor, with the broker on a thread of its own (its plugins die with it).
    case supervisor
    /// One plugin process of the pipeline, by name (the supervisor restarts it).
    case plugin(String)
    /// One of the round's publisher processes, by index.
    case publisher(Int)

    public var description: String {
        switch self {
        case .supervisor: "eventbus up"
        case .plugin(let name): name
        case .publisher(let index): "publisher \(index)"
        }
    }
}
