/// An event's identity in a stage: its `source` and `id`.
public struct EventIdentity: Sendable, Hashable {
    public let source: String
    public let id: String

    public init(source: String, id: String) {
        self.source = source
        self.id = id
    }
}
