import EventBusCore

/// One input event for the fold: the log SEQ, the envelope time (may be `nil`) and the typed payload.
public struct ReducerInput: Sendable {
    /// The event's sequence number in the log (reported in `receipt.rejected`).
    public let seq: UInt64
    /// The envelope's `time` (or the broker's append time); the moment of an ack without `*_at`.
    public let time: String?
    /// The typed ingress payload.
    public let payload: IngressPayload
    /// The original `data` object, re-emitted unchanged for `message.new` and
    /// `message.deleted`; when `nil` the reducer writes it from ``payload``.
    public let data: JSONValue?

    /// Creates an input.
    ///
    /// - Parameters:
    ///   - seq: the log SEQ.
    ///   - time: the envelope time; the runtime always passes one (the broker's
    ///     append time when the envelope has none). `nil` falls back to
    ///     `1970-01-01T00:00:00.000Z`.
    ///   - payload: the typed payload.
    ///   - data: the original `data` object, if at hand.
    public init(seq: UInt64, time: String?, payload: IngressPayload, data: JSONValue? = nil) {
        self.seq = seq
        self.time = time
        self.payload = payload
        self.data = data
    }
}
