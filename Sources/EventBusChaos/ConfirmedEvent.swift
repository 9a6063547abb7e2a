/// An event whose PUB a publisher saw confirmed, and the SEQ the broker gave it.
public struct ConfirmedEvent: Sendable, Equatable {
    public let source: String
    public let id: String
    public let seq: UInt64

    public init(source: String, id: String, seq: UInt64) {
        self.source = source
        self.id = id
        self.seq = seq
    }
}
