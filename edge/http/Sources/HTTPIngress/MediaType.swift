/// The media type of a `Content-Type` header, without its parameters, in lower case
/// (`Application/CloudEvents+JSON; charset=utf-8` is `application/cloudevents+json`).
public struct MediaType: Sendable, Equatable, CustomStringConvertible {
    /// `type/subtype`, lower case.
    public let essence: String

    /// A structured CloudEvent (one JSON object).
    public static let cloudEvent = MediaType("application/cloudevents+json")
    /// A batch of structured CloudEvents (one JSON array).
    public static let cloudEventBatch = MediaType("application/cloudevents-batch+json")
    /// Plain JSON: the data of a binary-mode CloudEvent, a query's params, a reply.
    public static let json = MediaType("application/json")

    /// Parses a header value; nil for none.
    public init?(header: String?) {
        guard let header else { return nil }
        let essence = header.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let trimmed = essence.trimmingCharacters(in: " \t").lowercased()
        guard !trimmed.isEmpty else { return nil }
        self.essence = trimmed
    }

    private init(_ essence: String) {
        self.essence = essence
    }

    /// Whether this is JSON: `application/json` or any `+json` type.
    public var isJSON: Bool { essence == "application/json" || essence.hasSuffix("+json") }

    public var description: String { essence }
}

extension StringProtocol {
    /// The text without the given leading and trailing characters.
    func trimmingCharacters(in set: String) -> String {
        let characters = Array(self)
        guard let first = characters.firstIndex(where: { !set.contains($0) }),
              let last = characters.lastIndex(where: { !set.contains($0) }) else { return "" }
        return String(characters[first...last])
    }
}
