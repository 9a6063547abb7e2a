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
        var result = ""
        result.reserveCapacity(part.utf8.count)
        for byte in part.utf8 {
            if byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "%") && byte != UInt8(ascii: "/") {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0x0F, radix: 16, uppercase: true)
            }
        }
        return result
    }
}
