import EventBusCore
import Testing

/// `eventbus publish`'s reading of NDJSON: events, line numbers, CRLF, blank lines.
@Suite struct NDJSONTests {
    static func split(_ text: String) -> ([String], [Int]) {
        let (events, lines) = NDJSON.events(in: Array(text.utf8))
        return (events.map { String(decoding: $0, as: UTF8.self) }, lines)
    }

    @Test func linesAndTheirNumbers() {
        #expect(Self.split("{\"a\":1}\n{\"b\":2}\n") == (["{\"a\":1}", "{\"b\":2}"], [1, 2]))
        #expect(Self.split("{\"a\":1}\r\n\r\n  \t\n{\"b\":2}") == (["{\"a\":1}", "{\"b\":2}"], [1, 4]))
        #expect(Self.split("") == ([], []))
        #expect(Self.split("\n\n") == ([], []))
        #expect(Self.split(" x \n") == ([" x "], [1]))
        #expect(Self.split("\r") == ([], []))
    }

    /// The same answer as the obvious split on generated text.
    @Test func agreesWithAPlainSplit() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [UInt8] = Array("ab {}\"\t\r\n".utf8)
        for _ in 0..<500 {
            let bytes = (0..<Int.random(in: 0..<60, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            var expected: ([[UInt8]], [Int]) = ([], [])
            for (index, raw) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
                var line = Array(raw)
                if line.last == 0x0D { line.removeLast() }
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                expected.0.append(line)
                expected.1.append(index + 1)
            }
            let got = NDJSON.events(in: bytes)
            #expect(got.events == expected.0 && got.lines == expected.1, "\(bytes)")
        }
    }
}
