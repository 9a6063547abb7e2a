import Testing
@testable import EventBus
@testable import EventBusCore

@Suite struct ErrorCodeTests {
    @Test func everyCodeHasTheProtocolSpelling() {
        let expected = ["bad_frame", "bad_verb", "bad_json", "bad_args", "bad_event", "unknown_type", "too_large",
                        "forbidden", "unknown_stage", "unknown_service", "bad_request", "not_found", "timeout", "busy"]
        #expect(ErrorCode.allCases.map(\.wire) == expected)
    }
}

@Suite struct VerbTests {
    @Test func everyVerbCarriesItsOwnNameOnTheWire() {
        for verb in Verb.allCases { #expect(verb.bytes == Array(verb.rawValue.utf8)) }
    }
}
