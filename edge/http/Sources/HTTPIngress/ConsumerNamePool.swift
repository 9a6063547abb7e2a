/// The durable consumer names of the streams of one server, `BASE.N`: a stream takes the
/// lowest free N and gives it back when it ends. The broker has no verb that deletes a
/// consumer (docs/protocol.md, CANCEL), so reusing names keeps its offsets file as long as
/// the most streams ever open at once, not as long as the streams ever opened.
public struct ConsumerNamePool: Sendable, Equatable {
    /// The names' common part, such as `eventbus-http.p8080`.
    public let base: String
    private var taken: Set<Int> = []

    public init(base: String) {
        self.base = base
    }

    /// Takes the lowest free name.
    public mutating func take() -> String {
        var slot = 0
        while taken.contains(slot) { slot += 1 }
        taken.insert(slot)
        return "\(base).\(slot)"
    }

    /// Gives `name` back.
    public mutating func give(_ name: String) {
        guard name.hasPrefix(base + "."), let slot = Int(name.dropFirst(base.count + 1)) else { return }
        taken.remove(slot)
    }

    /// Names in use.
    public var count: Int { taken.count }
}
