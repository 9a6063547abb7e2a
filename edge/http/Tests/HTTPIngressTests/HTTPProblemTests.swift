import EventBus
import HTTPIngress
import Testing

/// Bus errors to problem details (RFC 9457), without I/O.
@Suite struct HTTPProblemTests {
    @Test func everyBusCodeHasTheDocumentedStatus() {
        let expected: [ErrorCode: Int] = [
            .badEvent: 400, .badJSON: 400, .unknownType: 400, .badRequest: 400, .badArgs: 400, .badFrame: 400, .badVerb: 400,
            .unknownStage: 400, .forbidden: 403, .notFound: 404, .tooLarge: 413, .busy: 503, .unknownService: 503, .timeout: 504,
        ]
        #expect(Set(expected.keys) == Set(ErrorCode.allCases))
        for code in ErrorCode.allCases {
            #expect(HTTPProblem.status(of: code) == expected[code], "\(code)")
        }
    }

    @Test func badEventNamesTheEventAndTheField() {
        let problem = HTTPProblem(BusError(.badEvent, "event 1: data.user_id: must match [A-Za-z0-9_!.@-]{1,128}"))
        #expect(problem.status == 400)
        #expect(problem.code == "bad_event")
        #expect(problem.event == 1)
        #expect(problem.field == "data.user_id")
        #expect(problem.retryAfter == nil)
        let json = String(decoding: problem.json, as: UTF8.self)
        #expect(json == #"{"type":"urn:eventbus:problem:bad_event","title":"The event is not valid","status":400,"detail":"event 1: data.user_id: must match [A-Za-z0-9_!.@-]{1,128}","code":"bad_event","field":"data.user_id","event":1}"#)
    }

    @Test func aMessageWithoutAFieldNamesNone() {
        let tooLarge = HTTPProblem(BusError(.tooLarge, "event 3: 70211 bytes, max_event_bytes is 65536 (only a reply may be larger, up to 4194304)"))
        #expect(tooLarge.status == 413)
        #expect(tooLarge.event == 3)
        #expect(tooLarge.field == nil)
        let unknownType = HTTPProblem(BusError(.unknownType, #"event 0: type: "message.liked" is not an ingress type"#))
        #expect(unknownType.field == "type")
        let forbidden = HTTPProblem(BusError(.forbidden, "PUB to stage out is not allowed for client plugin-a (plugin:a)"))
        #expect(forbidden.status == 403)
        #expect(forbidden.field == nil && forbidden.event == nil)
    }

    @Test func busyAndTimeoutSayWhenToRetry() {
        let busy = HTTPProblem(BusError(.busy, "the log could not be written (ENOSPC); nothing was appended; retry later"))
        #expect(busy.status == 503)
        #expect(busy.retryAfter == 1)
        let timeout = HTTPProblem(BusError(.timeout, "no reply within 10 s"))
        #expect(timeout.status == 504)
        #expect(timeout.retryAfter == 1)
    }
}
