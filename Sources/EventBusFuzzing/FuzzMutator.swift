import EventBus

/// Seeded mutations of corpus inputs, for the harness that runs without libFuzzer.
///
/// The same seed gives the same inputs, so a failure found once is found again.
public struct FuzzMutator {
    private var random: SplitMix64

    /// Bytes that matter to the parsers, tried more often than the others.
    static let interesting: [UInt8] = Array("{}[]\":,\\/ \n\t0-1.eE+truefalsenullEB1PUB".utf8) + [0x00, 0x7F, 0x80, 0xBF, 0xC0, 0xC3, 0xE2, 0xED, 0xF0, 0xF4, 0xF5, 0xFF]
    /// Fragments that matter to the parsers.
    static let tokens: [[UInt8]] = [
        "\\u0000", "\\ud800", "\\udc00", "\\ud83d\\ude00", "\\u00e9", "1e999", "-0", "0.0e+0", "[[[[[[[[", "]]]]",
        "{\"a\":", "\"data\":{}", "\"type\":\"message.read\"", "\"specversion\":\"1.0\"", "\"id\":\"x\"", "\"subject\":\"a:b\"",
        "\"time\":\"2026-11-22T03:10:00.123Z\"", "\"replyto\":\"r\"", "\"source\":\"/s\"", "\u{FFFF}", "\u{10FFFF}", "é",
        "\nEB1\nPUB\n", "\nin\n", "\nout\n", "\nCONSUME\n", "\nACK\n",
    ].map { Array($0.utf8) }

    /// Creates a mutator from a seed.
    public init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    /// The next pseudo-random number.
    public mutating func next() -> UInt64 { random.next() }

    /// A number in `0..<bound` (`bound` > 0).
    public mutating func below(_ bound: Int) -> Int { random.below(bound) }

    /// A random byte, often one that matters to the parsers.
    public mutating func byte() -> UInt8 {
        below(3) == 0 ? UInt8(truncatingIfNeeded: next()) : Self.interesting[below(Self.interesting.count)]
    }

    /// `input` with one to eight mutations; `other` is spliced in sometimes.
    public mutating func mutate(_ input: [UInt8], other: [UInt8] = []) -> [UInt8] {
        var bytes = input
        for _ in 0...below(8) {
            let at = bytes.isEmpty ? 0 : below(bytes.count + 1)
            switch below(9) {
            case 0 where !bytes.isEmpty:  // flip a bit
                let position = min(at, bytes.count - 1)
                bytes[position] ^= 1 << UInt8(below(8))
            case 1:  // insert a byte
                bytes.insert(byte(), at: at)
            case 2 where !bytes.isEmpty:  // delete a range
                let count = min(bytes.count - min(at, bytes.count - 1), 1 + below(16))
                bytes.removeSubrange(min(at, bytes.count - 1)..<min(at, bytes.count - 1) + count)
            case 3 where !bytes.isEmpty:  // overwrite a byte
                bytes[min(at, bytes.count - 1)] = byte()
            case 4:  // insert a token
                bytes.insert(contentsOf: Self.tokens[below(Self.tokens.count)], at: at)
            case 5 where !bytes.isEmpty:  // truncate
                bytes.removeSubrange(at..<bytes.count)
            case 6 where !bytes.isEmpty:  // duplicate a range
                let start = min(at, bytes.count - 1)
                let end = min(bytes.count, start + 1 + below(32))
                bytes.insert(contentsOf: bytes[start..<end], at: below(bytes.count + 1))
            case 7 where !other.isEmpty:  // splice another input
                let cut = below(other.count)
                bytes = Array(bytes[..<min(at, bytes.count)]) + other[cut...]
            default:  // random bytes
                bytes.insert(contentsOf: (0..<(1 + below(8))).map { _ in byte() }, at: at)
            }
        }
        return bytes
    }
}
