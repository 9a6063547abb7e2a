import EventBus

/// Where a `GET /v1/stream` starts: after the SEQ of the `Last-Event-ID` header (what a
/// reconnecting `EventSource` sends) or of the `after` query parameter, or, with neither,
/// after the log's head when the stream opens (only events appended from then on).
public enum StreamPosition: Sendable, Equatable {
    /// Every event with a SEQ above this one.
    case after(UInt64)
    /// Events appended from now on.
    case now

    /// Reads the header and the parameter; the header wins, as a reconnect sends it.
    ///
    /// - Throws: ``HTTPProblem`` 400 `bad_request` for a value that is not a decimal SEQ.
    public init(lastEventID: String?, after: String?) throws(HTTPProblem) {
        for (name, value) in [("Last-Event-ID", lastEventID), ("after", after)] {
            guard let value else { continue }
            let trimmed = value.trimmingCharacters(in: " \t")
            guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let seq = UInt64(trimmed) else {
                throw HTTPProblem(status: 400, code: ErrorCode.badRequest.wire, detail: "\(name) \(value): expected the decimal SEQ of an event",
                                  field: name)
            }
            self = .after(seq)
            return
        }
        self = .now
    }
}
