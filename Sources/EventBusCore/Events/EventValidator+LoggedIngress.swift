extension EventValidator {
    /// The typed payload and `time` of a receipt or membership event that was logged at stage `in`,
    /// read by one scan that checks the JSON and finds the members the payload needs, without applying
    /// the ingress rules again: the broker (and the JetStream gateway) applied every one of them before
    /// logging the event, so a plugin reading `in` would only pay for them twice.
    ///
    /// The types are ``scannedIngress(_:)``'s (`message.read`, `message.delivered`,
    /// `notification.mark_read`, `notification.mark_unread`, `member.added`, `member.removed`,
    /// `message.deleted`); `type` is the one the event's topic names. `nil` when the scan cannot read
    /// the payload plainly (a member it needs is absent, not a string or has an escape; the text is not
    /// JSON) or for another type: the caller then takes the full path, which decides and words any error.
    ///
    /// Only for events read from `in`: on any other stage the broker checked the envelope alone.
    package static func loggedIngress(_ frame: UnsafeRawBufferPointer, type: EventType) -> (time: String?, payload: IngressPayload)? {
        var members = JSONScanner.Members(root: .null), data = JSONScanner.Members(root: .null)
        do {
            try JSONScanner.scan(frame, members: envelopeKeys, into: &members, nested: IngressShape.dataKeys, of: dataPosition,
                                 into: &data)
        } catch {
            return nil
        }
        guard members.root == .object else { return nil }
        // `time`, when present, a string without escapes, as the payload's members must be.
        var time: String?
        if let span = members[timePosition] {
            guard let text = IngressRule.plainString(span, in: frame) else { return nil }
            time = String(decoding: text, as: UTF8.self)
        }
        guard let payload = receiptPayload(type, data: data, in: frame) else { return nil }
        return (time, payload)
    }
}
