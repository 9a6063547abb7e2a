/// Which input event a plugin's output was made for, read back from the output's id.
///
/// ``PluginOutput`` gives what a plugin emits while it handles the event of SEQ `s` the
/// source `/eventbus/NAME` and the id `NAME:s:n`, and a filter that passes an event on keeps
/// both. Stage `in` refuses sources under `/eventbus/` (``EventValidator/reservedSourcePrefix``),
/// so only a plugin's outputs carry that pair. A reader of `out` that must judge an event at
/// the point of the log where it was caused, not where it was appended (a user's stream
/// deciding channel membership, docs/http.md), takes `s` from here.
public enum PluginCause {
    /// The input SEQ that `id` names, when `source` is `/eventbus/NAME` and `id` is
    /// `NAME:SEQ:N` (SEQ and N decimal); `nil` for any other pair.
    public static func inputSeq(source: String, id: String) -> UInt64? {
        guard source.hasPrefix(EventValidator.reservedSourcePrefix) else { return nil }
        let name = source.utf8.dropFirst(EventValidator.reservedSourcePrefix.utf8.count)
        let idBytes = id.utf8
        guard !name.isEmpty, idBytes.count > name.count, idBytes.starts(with: name),
              idBytes[idBytes.index(idBytes.startIndex, offsetBy: name.count)] == UInt8(ascii: ":") else { return nil }
        let rest = idBytes.dropFirst(name.count + 1).split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard rest.count == 2, rest.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }),
              UInt64(String(decoding: rest[1], as: UTF8.self)) != nil else { return nil }
        return UInt64(String(decoding: rest[0], as: UTF8.self))
    }

    /// ``inputSeq(source:id:)`` of the event `event` (its bytes); `nil` for bytes that are
    /// not an event with a `source` and an `id`.
    public static func inputSeq(ofEvent event: [UInt8]) -> UInt64? {
        guard let envelope = try? EventValidator.scanEnvelope(event) else { return nil }
        return inputSeq(source: envelope.source, id: envelope.id)
    }
}
