import CJSONBits
import Testing
@testable import EventBusCore

/// The quotes bitmap (`eventbus_json_quote_bits`) and the scan that uses it: plain input's
/// strings end at their next quote, and every outcome is the byte-by-byte scan's.
@Suite struct JSONQuoteBitsTests {
    /// The C function's answer for `bytes`: the bitmap and whether every byte is plain.
    private func quoteBits(_ bytes: [UInt8]) -> (bits: [UInt64], plain: Bool) {
        var bits = [UInt64](repeating: 0, count: (bytes.count + 63) / 64)
        let plain = bytes.withUnsafeBufferPointer { input in
            bits.withUnsafeMutableBufferPointer { eventbus_json_quote_bits(input.baseAddress!, input.count, $0.baseAddress!) }
        }
        return (bits, plain != 0)
    }

    @Test func marksEachQuoteAndTellsEveryByteThatIsNotPlain() {
        for length in [1, 2, 15, 16, 17, 63, 64, 65, 127, 128, 130, 200] {
            for position in Set([0, length / 2, length - 1]) {
                for value in 0...255 {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = UInt8(value)
                    // A second quote in another 64-byte word, when there is one.
                    let other = (position + 64) % length
                    if other != position { bytes[other] = UInt8(ascii: "\"") }
                    let (bits, plain) = quoteBits(bytes)
                    var expected = [UInt64](repeating: 0, count: (length + 63) / 64)
                    for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: "\"") {
                        expected[offset / 64] |= 1 << UInt64(offset % 64)
                    }
                    #expect(bits == expected, "length \(length), byte \(value) at \(position)")
                    let isPlain = value >= 0x20 && value < 0x80 && value != 0x5C
                    #expect(plain == isPlain, "length \(length), byte \(value) at \(position)")
                }
            }
        }
    }

    /// Plain events and mutations of them (cut short, a quote or brace dropped or doubled, a
    /// byte changed): the scan with quotes marked gives exactly what the byte-by-byte scan gives.
    @Test(arguments: [21 as UInt64, 22, 23])
    func scansPlainInputAsTheByteByByteScanDoes(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let keys = JSONScanner.Keys(["specversion", "id", "source", "type", "subject", "time", "data", "absent"])
        var marked = 0
        for round in 0..<3_000 {
            var event = Array(
                #"{"specversion":"1.0","id":"e-\#(round)","source":"/backend","type":"message.read","subject":"messaging:general","time":"2026-11-22T03:10:00.123Z","data":{"cid":"messaging:general","user_id":"u\#(round % 97)","message_id":"m\#(round)","n":[1,-2.5e3,true,null,{"k":"\#(String(repeating: "x", count: round % 150))"}]}}"#
                    .utf8)
            if round % 4 != 0 {
                for _ in 0..<(1 + Int(random.next() % 3)) {
                    let at = Int(random.next() % UInt64(event.count))
                    switch random.next() % 5 {
                    case 0: event.removeSubrange(at...)
                    case 1: event.remove(at: at)
                    case 2: event.insert(UInt8(ascii: "\""), at: at)
                    case 3: event.insert(event[at], at: at)
                    default: event[at] = [UInt8(ascii: "}"), UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "["), 0x20][Int(random.next() % 5)]
                    }
                    if event.isEmpty { event = [UInt8(ascii: "{")] }
                }
            }
            if quoteBits(event).plain { marked += 1 }
            func outcome(markQuotes: Bool) -> Result<JSONScanner.Members, JSONError> {
                event.withUnsafeBytes { buffer in
                    Result { () throws(JSONError) in
                        try JSONScanner.scan(buffer, members: keys, stackKeys: JSONScanner.stackKeys, markQuotes: markQuotes)
                    }
                }
            }
            #expect(outcome(markQuotes: true) == outcome(markQuotes: false), "\(String(decoding: event, as: UTF8.self))")
        }
        #expect(marked > 2_500, "most inputs are plain, so the marked scan is what ran")
    }

    @Test func findsEachNameInItsBucketAndTriesLookalikesInTurn() {
        func index(_ key: String, in keys: JSONScanner.Keys) -> Int {
            Array(key.utf8).withUnsafeBytes {
                JSONScanner.Keys.index(ofRaw: $0, table: keys.storage.table, keys: Unmanaged.passUnretained(keys.storage))
            }
        }
        let envelope = JSONScanner.Keys(["specversion", "id", "source", "type", "subject", "time", "data", "a_name_longer_than_16"])
        #expect(envelope.storage.table[0] != 0, "these names have buckets of their own")
        for (position, name) in envelope.names.enumerated() {
            #expect(index(name, in: envelope) == position)
        }
        for other in ["", "i", "ids", "specversioN", "specversion1", "a_name_longer_than_17", "a_name_longer_than_1", "dat"] {
            #expect(index(other, in: envelope) == -1, "\(other)")
        }
        // Alike in length and first eight bytes: no hash can part them, so each is tried.
        let lookalikes = JSONScanner.Keys(["abcdefgh1", "abcdefgh2", "x"])
        #expect(lookalikes.storage.table[0] == 0)
        #expect(index("abcdefgh1", in: lookalikes) == 0)
        #expect(index("abcdefgh2", in: lookalikes) == 1)
        #expect(index("x", in: lookalikes) == 2)
        #expect(index("abcdefgh3", in: lookalikes) == -1)
    }
}
