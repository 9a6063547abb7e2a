
/// What a plugin sends on for the event it is handling.
///
/// Events emitted here get deterministic ids, `<plugin>:<seq>:<n>` (the input
/// SEQ and the emission's position), so that a replay after a crash
/// republishes the same ids and the broker's deduplication drops them.
public struct PluginOutput: Sendable {
    /// Where an emitted event goes.
    public enum Destination: Sendable {
        /// The plugin's output stage (the next plugin, or `out`).
        case next
        /// The `diag` stage: rejections, audit records.
        case diag
    }

    /// `{"specversion":"1.0","id":"<plugin>:`: how every emitted event starts, written once.
    private let head: [UInt8]
    /// `","source":"<source>"`: what follows an emitted event's id.
    private let sourceMember: [UInt8]
    private(set) var seq: UInt64 = 0
    private var emitted = 0
    /// Events for the output stage, in order, as the runtime publishes them.
    package private(set) var outgoing: [OutgoingEvent] = []
    /// Events for `diag`, in order.
    public private(set) var diagnostics: [[UInt8]] = []

    /// Events for the output stage, in order: what a test of a plugin reads.
    public var forward: [[UInt8]] { outgoing.map(\.bytes) }

    /// An empty output for `plugin` (the runtime makes one; a unit test of a
    /// plugin's ``Plugin/handle(_:state:output:)`` may too).
    public init(plugin: String) {
        let source = "/eventbus/\(plugin)"
        var w = JSONWriter()
        w.beginObject()
        w.key("specversion"); w.string("1.0")
        w.key("id"); w.string(plugin + ":")
        head = w.bytes.dropLast()  // the id goes on: SEQ, `:`, n, then its closing quote
        var member = JSONWriter()
        member.beginObject()
        member.key("source"); member.string(source)
        sourceMember = [UInt8(ascii: "\""), UInt8(ascii: ",")] + member.bytes.dropFirst()
    }

    package mutating func begin(_ seq: UInt64) {
        self.seq = seq
        emitted = 0
    }

    package mutating func removeAll() {
        outgoing.removeAll(keepingCapacity: true)
        diagnostics.removeAll(keepingCapacity: true)
    }

    /// Passes `event` on unchanged (same id, same bytes): the middleware's `next`.
    ///
    /// The runtime forwards it by reference (`@SEQ`) where the broker can, so
    /// that the broker appends the bytes it already holds.
    public mutating func pass(_ event: PluginEvent) {
        outgoing.append(OutgoingEvent(bytes: event.bytes, passedSeq: event.seq))
    }

    /// Passes `event` on with its `data` replaced by `data` (JSON bytes): every other byte
    /// as it was — the same id, source, type, subject and time — so that it stays the event
    /// it was. What a filter that redacts a field sends instead of ``pass(_:)`` (the privacy
    /// filters' counts, docs/privacy.md). Throws `bad_event` for an event without `data`.
    public mutating func pass(_ event: PluginEvent, data: [UInt8]) throws(EventValidationError) {
        guard let range = try EventValidator.scanEnvelope(event.bytes).dataRange else {
            throw EventValidationError(code: .badEvent, message: "data: an event without data has none to replace")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(event.bytes.count - range.count + data.count)
        bytes += event.bytes[..<range.lowerBound]
        bytes += data
        bytes += event.bytes[range.upperBound...]
        outgoing.append(OutgoingEvent(bytes: bytes))
    }

    /// Emits a new event.
    ///
    /// - Parameters:
    ///   - type: The event type, such as `message.read`.
    ///   - subject: A cid, `@user`, or a channel type name.
    ///   - data: The `data` object as JSON bytes.
    ///   - time: The event time; use the input event's time so that a replay
    ///     produces the same bytes.
    ///   - destination: The output stage (default) or `diag`.
    public mutating func emit(type: String, subject: String, data: [UInt8], time: String?,
                              to destination: Destination = .next) {
        let event = envelope(type: type, subject: subject, data: data, time: time, replyto: nil)
        switch destination {
        case .next: outgoing.append(OutgoingEvent(bytes: event))
        case .diag: diagnostics.append(event)
        }
    }

    /// Answers a `query` event with a result object (JSON bytes).
    ///
    /// The reply travels the rest of the pipeline (a privacy filter may redact
    /// it) and the broker returns it to the requester when it reaches `out`.
    public mutating func reply(to query: QueryEvent, result: [UInt8]) {
        var w = JSONWriter(capacity: result.count + 16)
        w.beginObject()
        w.key("result"); w.raw(result)
        w.endObject()
        outgoing.append(OutgoingEvent(bytes: envelope(type: EventType.reply.rawValue, subject: query.service, data: w.bytes,
                                time: query.time, replyto: query.replyTo)))
    }

    /// Answers a `query` event with an error: `code` is a wire code such as `not_found`.
    public mutating func reply(to query: QueryEvent, errorCode code: ErrorCode, message: String) {
        var w = JSONWriter()
        w.beginObject()
        w.key("error"); w.beginObject()
        w.key("code"); w.string(code.wire)
        w.key("message"); w.string(message)
        w.endObject()
        w.endObject()
        outgoing.append(OutgoingEvent(bytes: envelope(type: EventType.reply.rawValue, subject: query.service, data: w.bytes,
                                time: query.time, replyto: query.replyTo)))
    }

    /// Answers a `query` event with a whole `data` object (JSON bytes) that
    /// carries `result` (or `error`) and any fields for later stages, such as
    /// the redacted views a privacy filter picks from.
    ///
    /// The broker returns only `data.result` (or `data.error`) to the
    /// requester; the other fields never leave the broker.
    public mutating func reply(to query: QueryEvent, data: [UInt8]) {
        outgoing.append(OutgoingEvent(bytes: envelope(type: EventType.reply.rawValue, subject: query.service, data: data,
                                time: query.time, replyto: query.replyTo)))
    }

    /// Replaces a `reply` event with one that carries new `data` (JSON bytes)
    /// for the same requester, service and time: what a filter that redacts
    /// replies emits instead of passing the original on.
    public mutating func reply(replacing reply: QueryReply, data: [UInt8]) {
        outgoing.append(OutgoingEvent(bytes: envelope(type: EventType.reply.rawValue, subject: reply.service, data: data,
                                time: reply.time, replyto: reply.replyTo)))
    }

    private mutating func envelope(type: String, subject: String, data: [UInt8], time: String?, replyto: String?) -> [UInt8] {
        // `{"specversion":"1.0","id":"<plugin>:<seq>:<n>","source":"<source>"` from its prepared parts.
        var w = JSONWriter(capacity: head.count + sourceMember.count + data.count + 120)
        w.fragment(head)
        w.fragment(decimal: seq)
        w.fragment(byte: UInt8(ascii: ":"))
        w.fragment(decimal: UInt64(emitted))
        w.fragment(sourceMember)
        emitted += 1
        w.key(plain: "type"); w.string(type)
        w.key(plain: "subject"); w.string(subject)
        if let time { w.key(plain: "time"); w.string(time) }
        if let replyto { w.key(plain: "replyto"); w.string(replyto) }
        w.key(plain: "data"); w.raw(data)
        w.endObject()
        return w.takeBytes()
    }
}
