/// The `Nats-Msg-Id` of an event: its dedup identity (STAGE, `source`, `id`) as a header value.
///
/// The three parts are joined by `/` after percent-encoding, in each, `%`, `/` and every
/// byte outside printable ASCII (space included): the result is printable ASCII (a valid
/// header value, whatever `source` holds) and two identities give the same value only when
/// they are equal. A stream holds one stage, so the stage part is redundant inside a
/// stream; it keeps the value the identity of docs/protocol.md wherever it is logged.
public enum MessageID {
    /// `in/%2Fchat-api/r1` for stage `in`, source `/chat-api`, id `r1`.
    public static func make(stage: String, source: String, id: String) -> String {
        [stage, source, id].map(encode).joined(separator: "/")
    }

    /// `part` with `%`, `/` and bytes outside 0x21–0x7E as `%XX` (upper-case hex).
    static func encode(_ part: String) -> String {
        var part = part
        // Most sources and ids need no escape: then the part is the value as it is.
        guard part.withUTF8({ $0.contains(where: needsEscape) }) else { return part }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(part.utf8.count + 8)
        for byte in part.utf8 {
            if needsEscape(byte) {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigit(byte >> 4))
                bytes.append(hexDigit(byte & 0x0F))
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `%`, `/` and bytes outside 0x21–0x7E.
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "%") || byte == UInt8(ascii: "/")
    }

    /// An upper-case hex digit for `nibble` (0–15).
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
    }
}
