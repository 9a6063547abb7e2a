import Testing

@testable import EventBusCore

/// HELLO's JSON frame, as the broker and a cluster's gateway both read it: without I/O.
@Suite struct HelloRequestTests {
    static func parse(_ text: String) throws(BusError) -> HelloRequest { try HelloRequest(frame: Array(text.utf8)) }

    @Test func eachMemberIsOptionalAndReadWithItsType() throws {
        #expect(try Self.parse("{}") == HelloRequest())
        #expect(try Self.parse(#"{"name":"w","role":"plugin","version":"1","services":["weather","receipts.v2"],"#
            + #""batch":true,"compact_ok":false,"ordered":true,"other":[1]}"#)
            == HelloRequest(name: "w", services: ["weather", "receipts.v2"], batch: true, compactOK: false, ordered: true))
        #expect(try Self.parse(#"{"name":7,"services":[]}"#) == HelloRequest(services: []), "a name that is not a string is not logged")
    }

    @Test(arguments: [
        (#"{"batch":"yes"}"#, ErrorCode.badArgs, "frame 3: batch must be true or false"),
        (#"{"compact_ok":1}"#, .badArgs, "frame 3: compact_ok must be true or false"),
        (#"{"ordered":null}"#, .badArgs, "frame 3: ordered must be true or false"),
        (#"{"services":"weather"}"#, .badArgs, "frame 3: services must be an array of service names"),
        (#"{"services":["weather","Bad Name"]}"#, .badArgs, "frame 3: services must be names matching [a-z0-9_.-]{1,64}"),
        (#"{"services":[7]}"#, .badArgs, "frame 3: services must be names matching [a-z0-9_.-]{1,64}"),
        ("[]", .badArgs, "frame 3: must be a JSON object"),
        ("{", .badJSON, "frame 3: "),
    ])
    func aWrongMemberIsRefusedNamingIt(text: String, code: ErrorCode, message: String) {
        #expect {
            try Self.parse(text)
        } throws: { error in
            guard let error = error as? BusError else { return false }
            return error.code == code && error.message.hasPrefix(message)
        }
    }

    /// From a HELLO as both fronts take it: its frame 3, or `bad_frame` when it is missing.
    @Test func theFrameComesFromTheMessage() throws {
        let asked = CommandMessage(peer: [1], verb: .hello, correlation: Array("h".utf8), arguments: [Array(#"{"batch":true}"#.utf8)][...])
        #expect(try HelloRequest(asked) == HelloRequest(batch: true))
        let bare = CommandMessage(peer: [1], verb: .hello, correlation: Array("h".utf8), arguments: [])
        #expect {
            try HelloRequest(bare)
        } throws: { error in
            (error as? BusError)?.code == .badFrame && (error as? BusError)?.message == "HELLO: frame 3 (JSON) is missing"
        }
    }
}
