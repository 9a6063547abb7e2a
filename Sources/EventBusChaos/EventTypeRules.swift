import EventBusCore

/// The few facts about event types the checker needs, from the catalogue (EventBusCore).
enum EventTypeRules {
    /// Whether `type` is membership or settings, which `out` never delivers.
    static func isPrivate(_ type: Substring) -> Bool {
        EventType(rawValue: String(type))?.isPrivate == true
    }
}
