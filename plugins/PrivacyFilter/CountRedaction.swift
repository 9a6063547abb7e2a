import EventBusCore

/// Puts a receipt event's count as others may see it in place of the full
/// count (docs/privacy.md "Counts on receipt events").
///
/// The reducer writes `message.read` and `message.delivered` with the counts of
/// the message their watermark points at, over everyone, and, when a member
/// whose receipts are hidden from others counts in one, `redacted` with that
/// count without them (docs/events.md rule 26):
///
/// ```json
/// {"cid": "…", "user_id": "…", "last_read_message_id": "m3", "last_read": "…",
///  "read_count": 4, "delivered_count": 5, "redacted": {"read_count": 3}}
/// ```
///
/// Each filter moves its own count (``PrivacyPolicy/countKey``) into place and
/// takes it out of `redacted`, which goes once empty: in the default pipeline,
/// nothing of it reaches `out`.
public enum CountRedaction {
    /// `"redacted":`, which only an event with something to redact holds.
    static let marker = Array(#""redacted":"#.utf8)

    /// The new `data` of `event` (its bytes), or `nil` when nothing of
    /// `policy` is redacted in it: pass the event on unchanged then.
    public static func redact(_ event: [UInt8], policy: PrivacyPolicy) throws(EventValidationError) -> [UInt8]? {
        guard contains(event, marker), let range = try EventValidator.scanEnvelope(event).dataRange else { return nil }
        // The data alone: the envelope goes on as it is (``PluginOutput/pass(_:data:)``).
        let data: JSONValue
        do {
            data = try JSONParser.parse(Array(event[range]))
        } catch {
            throw EventValidationError(code: .badJSON, message: "data: \(error)")
        }
        guard case .object(var fields) = data,
            let at = fields.firstIndex(where: { $0.key == "redacted" }),
            case .object(var redacted) = fields[at].value,
            let shown = redacted.firstIndex(where: { $0.key == policy.countKey })
        else { return nil }
        let count = redacted.remove(at: shown).value
        if let full = fields.firstIndex(where: { $0.key == policy.countKey }) { fields[full].value = count }
        if redacted.isEmpty { fields.remove(at: at) } else { fields[at].value = .object(redacted) }
        return JSONValue.object(fields).serialized()
    }

    /// Whether `bytes` holds `pattern`.
    static func contains(_ bytes: [UInt8], _ pattern: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { bytes in pattern.withUnsafeBytes { ByteRun.contains(bytes, $0) } }
    }
}
