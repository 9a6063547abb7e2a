/// State a plugin keeps, committed together with the SEQ of the last event applied.
///
/// The runtime stores a snapshot now and then and, after a restart, replays the
/// events after the snapshot's SEQ through ``Plugin/handle(_:state:output:)``;
/// outputs have deterministic ids, so the broker drops the repeats.
public protocol PluginState: Sendable {
    /// Whether the runtime keeps snapshots. Stateless plugins resume from their ACK instead.
    static var isPersistent: Bool { get }
    /// The state as bytes.
    func snapshot() -> [UInt8]
    /// Restores a state from ``snapshot()``'s bytes.
    init(snapshot: [UInt8]) throws
}

extension PluginState {
    public static var isPersistent: Bool { true }
}

/// The state of a plugin that keeps none.
public struct NoState: PluginState {
    public static var isPersistent: Bool { false }
    public init() {}
    public init(snapshot: [UInt8]) {}
    public func snapshot() -> [UInt8] { [] }
}
