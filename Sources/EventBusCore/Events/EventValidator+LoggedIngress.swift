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
        guard members.root == .object, data.root == .object else { return nil }
        /// A required member: its text, `nil` when absent or not plain.
        func text(_ span: JSONScanner.Span?) -> String? {
            IngressRule.plainString(span, in: frame).map { String(decoding: $0, as: UTF8.self) }
        }
        /// An optional member: `.some(nil)` when absent, `nil` when present but not plain.
        func optional(_ span: JSONScanner.Span?) -> String?? {
            guard let span else { return .some(nil) }
            return text(span).map { .some($0) }
        }
        guard let time = optional(members[timePosition]) else { return nil }
        // Positions in `IngressShape.dataKeyNames`.
        let cid = data[0], user = data[1], message = data[2], readAt = data[3], deliveredAt = data[4]
        let payload: IngressPayload
        switch type {
        case .messageRead:
            guard let cid = text(cid), let user = text(user), let message = text(message), let readAt = optional(readAt) else { return nil }
            payload = .messageRead(cid: cid, userID: user, messageID: message, readAt: readAt)
        case .messageDelivered:
            guard let cid = text(cid), let user = text(user), let message = text(message), let deliveredAt = optional(deliveredAt)
            else { return nil }
            payload = .messageDelivered(cid: cid, userID: user, messageID: message, deliveredAt: deliveredAt)
        case .notificationMarkRead:
            guard let cid = text(cid), let user = text(user), let readAt = optional(readAt) else { return nil }
            payload = .notificationMarkRead(cid: cid, userID: user, readAt: readAt)
        case .notificationMarkUnread:
            guard let cid = text(cid), let user = text(user), let message = text(message) else { return nil }
            payload = .notificationMarkUnread(cid: cid, userID: user, messageID: message)
        case .memberAdded:
            guard let cid = text(cid), let user = text(user) else { return nil }
            payload = .memberAdded(cid: cid, userID: user)
        case .memberRemoved:
            guard let cid = text(cid), let user = text(user) else { return nil }
            payload = .memberRemoved(cid: cid, userID: user)
        case .messageDeleted:
            guard let cid = text(cid), let message = text(message) else { return nil }
            payload = .messageDeleted(cid: cid, messageID: message)
        default:
            return nil
        }
        return (time, payload)
    }
}
