/// Which plugin made an output, and for which of its input events, read back from the
/// output's id.
///
/// ``PluginOutput`` gives what a plugin emits while it handles the event of SEQ `s` the
/// source `/eventbus/NAME` and the id `NAME:s:n`, and a filter that passes an event on keeps
/// both. Stage `in` refuses sources under `/eventbus/` (``EventValidator/reservedSourcePrefix``),
/// so only a plugin's outputs carry that pair. A reader of `out` that must judge an event at
/// the point of the log where it was caused, not where it was appended (a user's stream
/// deciding channel membership, docs/http.md), takes `s` from here: a SEQ of the stage that
/// plugin reads.
public struct PluginCause: Sendable, Equatable {
    /// The plugin, `NAME`.
    public let plugin: String
    /// The SEQ of the input event the output was made for, in the stage the plugin reads.
    public let inputSeq: UInt64

    public init(plugin: String, inputSeq: UInt64) {
        self.plugin = plugin
        self.inputSeq = inputSeq
    }

    /// The cause that `source` and `id` name when `source` is `/eventbus/NAME` and `id` is
    /// `NAME:SEQ:N` (SEQ and N decimal); `nil` for any other pair.
    public init?(source: String, id: String) {
        guard source.hasPrefix(EventValidator.reservedSourcePrefix) else { return nil }
        let name = source.utf8.dropFirst(EventValidator.reservedSourcePrefix.utf8.count)
        let idBytes = id.utf8
        guard !name.isEmpty, idBytes.count > name.count, idBytes.starts(with: name),
              idBytes[idBytes.index(idBytes.startIndex, offsetBy: name.count)] == UInt8(ascii: ":") else { return nil }
        let rest = idBytes.dropFirst(name.count + 1).split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard rest.count == 2, rest.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }),
              UInt64(String(decoding: rest[1], as: UTF8.self)) != nil,
              let seq = UInt64(String(decoding: rest[0], as: UTF8.self)) else { return nil }
        self.init(plugin: String(decoding: name, as: UTF8.self), inputSeq: seq)
    }

    /// The cause named by the event `event` (its bytes); `nil` for bytes that are not an event
    /// with a `source` and an `id`, or whose pair names none.
    public init?(event: [UInt8]) {
        guard let envelope = try? EventValidator.scanEnvelope(event) else { return nil }
        self.init(source: envelope.source, id: envelope.id)
    }
}
