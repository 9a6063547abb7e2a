import HTTPIngress
import Testing

/// Where a stream starts, without I/O.
@Suite struct StreamPositionTests {
    @Test func theHeaderWinsOverTheParameter() throws {
        #expect(try StreamPosition(lastEventID: "17", after: "3") == .after(17))
        #expect(try StreamPosition(lastEventID: nil, after: "3") == .after(3))
        #expect(try StreamPosition(lastEventID: " 0 ", after: nil) == .after(0))
        #expect(try StreamPosition(lastEventID: nil, after: nil) == .now)
    }

    @Test func anythingButADecimalSeqIs400() {
        for value in ["", "-1", "1.5", "abc", "0x10", "+3", "18446744073709551616"] {
            #expect(throws: HTTPProblem.self, "\(value)") { try StreamPosition(lastEventID: value, after: nil) }
            do {
                _ = try StreamPosition(lastEventID: nil, after: value)
                Issue.record("\(value) was taken")
            } catch {
                #expect(error.status == 400 && error.code == "bad_request" && error.field == "after")
            }
        }
    }
}
