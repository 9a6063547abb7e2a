import EventBus

extension HTTPProblem {
    /// The problem for an error of the bus: its code and message, the status that code maps
    /// to (docs/http.md, "Status codes"), and the event index and field its message names
    /// (`event 1: data.user_id: must match …`; a query's `params.cid: no channel …`).
    public init(_ error: BusError) {
        let (event, field, _) = Self.locate(error.message)
        let named = [ErrorCode.badEvent, .unknownType, .badRequest, .notFound].contains(error.code) ? field : nil
        self.init(status: Self.status(of: error.code), code: error.code.wire, detail: error.message, field: named, event: event,
                  retryAfter: [ErrorCode.busy, .timeout].contains(error.code) ? 1 : nil)
    }

    /// The HTTP status of a bus error code.
    public static func status(of code: ErrorCode) -> Int {
        switch code {
        case .badEvent, .badJSON, .unknownType, .badRequest, .badArgs, .badFrame, .badVerb, .unknownStage: 400
        case .forbidden: 403
        case .notFound: 404
        case .tooLarge: 413
        case .busy, .unknownService: 503
        case .timeout: 504
        }
    }

    /// The event index and field a bus message starts with, and the rest of it:
    /// `event 1: data.user_id: must match …` gives (1, `data.user_id`, `must match …`).
    /// A field is a dotted path of letters, digits, `_` and `[N]`; a message without one
    /// gives nil for it.
    static func locate(_ message: String) -> (event: Int?, field: String?, rest: Substring) {
        var rest = Substring(message)
        var event: Int?
        if rest.hasPrefix("event "), let colon = rest.firstIndex(of: ":"),
           let index = Int(rest[rest.index(rest.startIndex, offsetBy: 6)..<colon]) {
            event = index
            rest = rest[rest.index(after: colon)...].drop { $0 == " " }
        }
        guard let separator = rest.range(of: ": ") else { return (event, nil, rest) }
        let candidate = rest[..<separator.lowerBound]
        let isPath = !candidate.isEmpty && candidate.allSatisfy { character in
            character.isASCII && (character.isLetter || character.isNumber || "_.[]-".contains(character))
        }
        guard isPath else { return (event, nil, rest) }
        return (event, String(candidate), rest[separator.upperBound...])
    }
}
