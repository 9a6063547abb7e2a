import EventBus

/// An answer to a PUB, to send to its peer.
public struct PubReply: Sendable, Equatable {
    public var peer: [UInt8]
    public var correlation: [UInt8]
    public var outcome: Outcome

    public init(peer: [UInt8], correlation: [UInt8], outcome: Outcome) {
        self.peer = peer
        self.correlation = correlation
        self.outcome = outcome
    }

    public enum Outcome: Sendable, Equatable {
        /// Every event stored: their stream sequences, in event order; `compact` asks for
        /// them in one frame.
        case confirmed([UInt64], compact: Bool)
        case failed(BusError)
    }
}
