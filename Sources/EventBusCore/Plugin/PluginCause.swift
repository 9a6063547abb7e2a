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
        var source = source, id = id
        guard let cause = source.withUTF8({ source in id.withUTF8 { id in Self.cause(source: source, id: id) } }) else { return nil }
        self = cause
    }

    /// The cause named by the event `event` (its bytes); `nil` for bytes that are not an event
    /// with a `source` and an `id`, or whose pair names none.
    ///
    /// Read for every channel event of every user's stream, so by one scan for those two members
    /// alone, with no string made but the plugin's name; an escape in either takes the envelope's scan.
    public init?(event: [UInt8]) {
        let read = event.withUnsafeBytes { frame -> (cause: PluginCause?, plain: Bool) in
            guard let members = try? JSONScanner.scan(frame, members: Self.identityKeys), members.root == .object else {
                return (nil, true)
            }
            guard let source = EventValidator.IngressRule.plainString(members[0], in: frame),
                  let id = EventValidator.IngressRule.plainString(members[1], in: frame) else {
                // Absent, not strings, or escaped: only the last can still name a cause.
                return (nil, members[0]?.hasEscapes != true && members[1]?.hasEscapes != true)
            }
            return (Self.cause(source: source, id: id), true)
        }
        if let cause = read.cause {
            self = cause
            return
        }
        guard !read.plain, let envelope = try? EventValidator.scanEnvelope(event) else { return nil }
        self.init(source: envelope.source, id: envelope.id)
    }

    /// `source` and `id`, in that order: what ``init(event:)`` reads.
    private static let identityKeys = JSONScanner.Keys(["source", "id"])

    /// The rule of ``init(source:id:)`` on the members' bytes.
    private static func cause(source: UnsafeBufferPointer<UInt8>, id: UnsafeBufferPointer<UInt8>) -> PluginCause? {
        let prefix = EventValidator.reservedSourcePrefix.utf8
        guard source.count > prefix.count, source.starts(with: prefix) else { return nil }
        let name = UnsafeBufferPointer(rebasing: source[prefix.count...])
        guard id.count > name.count + 1, id.starts(with: name), id[name.count] == UInt8(ascii: ":") else { return nil }
        // SEQ `:` N, both decimal and non-empty; SEQ and N within UInt64.
        let rest = UnsafeBufferPointer(rebasing: id[(name.count + 1)...])
        guard let colon = rest.firstIndex(of: UInt8(ascii: ":")),
              let seq = ASCIIDecimal.parse(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: rest[..<colon]))),
              ASCIIDecimal.parse(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: rest[(colon + 1)...]))) != nil else { return nil }
        return PluginCause(plugin: String(decoding: name, as: UTF8.self), inputSeq: seq)
    }
}
