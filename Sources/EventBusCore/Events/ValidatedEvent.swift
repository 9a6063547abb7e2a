/// An event that passed ``EventValidator``: its envelope and, at stage `in`, its typed data.
public struct ValidatedEvent: Sendable, Equatable {
    /// The envelope attributes.
    public var envelope: EventEnvelope
    /// The typed `data` of an ingress event; set for events validated at stage `in`, `nil` otherwise.
    public var payload: IngressPayload?

    /// Creates a validated event.
    public init(envelope: EventEnvelope, payload: IngressPayload? = nil) {
        self.envelope = envelope
        self.payload = payload
    }
}
