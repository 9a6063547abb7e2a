import EventBus
import Foundation

/// A CloudEvents 1.0 envelope in JSON structured mode, built from `publish` flags.
struct CloudEventEnvelope {
    var id: String
    var source: String
    var type: String
    var subject: String
    /// The `data` object, JSON text as given.
    var data: String
    var time: Date

    /// The JSON, attributes in the order of docs/protocol.md's example ("The envelope"), strings escaped.
    var json: String {
        "{\"specversion\":\"1.0\",\"id\":\(Self.quoted(id)),\"source\":\(Self.quoted(source)),"
            + "\"type\":\(Self.quoted(type)),\"time\":\(Self.quoted(Self.timestamp(time))),"
            + "\"subject\":\(Self.quoted(subject)),\"data\":\(data.trimmingCharacters(in: .whitespacesAndNewlines))}"
    }

    /// `value` as a JSON string literal.
    static func quoted(_ value: String) -> String {
        var writer = JSONWriter(capacity: value.utf8.count + 2)
        writer.string(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` in UTC.
    static func timestamp(_ date: Date) -> String {
        let millis = Int64((date.timeIntervalSince1970 * 1_000).rounded(.down))
        var seconds = time_t(millis / 1_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                      Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                      Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(millis % 1_000))
    }
}
