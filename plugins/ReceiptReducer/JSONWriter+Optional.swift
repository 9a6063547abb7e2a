import EventBusCore

extension JSONWriter {
    /// Writes `text` as a string value, or `null` when there is none.
    mutating func string(orNull text: String?) {
        if let text { string(text) } else { null() }
    }
}
