import Foundation

/// A reader of `text/event-stream` as a browser's `EventSource` reads it (the WHATWG HTML
/// standard, "Parsing an event stream"), for the tests' clients: fields up to each blank
/// line make one message; a comment line makes a message of its own here, so that tests
/// see the heartbeats.
struct SSEReader {
    /// One dispatched message.
    struct Message: Equatable {
        var id: String?
        var event: String?
        var data: String?
        var comment: String?
    }

    /// The messages of `text` whose blank line has arrived; a partial one at the end is left out.
    static func messages(_ text: String) -> [Message] {
        var messages: [Message] = []
        var current = Message()
        var hasFields = false
        // Lines end with CRLF, LF or CR (a Swift Character holds CRLF whole, so normalize first).
        let lines = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        for line in lines.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            if line.isEmpty {
                if hasFields { messages.append(current) }
                current = Message()
                hasFields = false
            } else if line.hasPrefix(":") {
                messages.append(Message(comment: String(line.dropFirst()).trimmingLeadingSpace))
            } else {
                let colon = line.firstIndex(of: ":") ?? line.endIndex
                let name = String(line[..<colon])
                let value = colon == line.endIndex ? "" : String(line[line.index(after: colon)...]).trimmingLeadingSpace
                switch name {
                case "id": current.id = value
                case "event": current.event = value
                case "data": current.data = current.data.map { $0 + "\n" + value } ?? value
                default: break
                }
                hasFields = true
            }
        }
        return messages
    }
}

extension String {
    /// Without the one space an SSE field value may start with.
    var trimmingLeadingSpace: String { hasPrefix(" ") ? String(dropFirst()) : self }
}
