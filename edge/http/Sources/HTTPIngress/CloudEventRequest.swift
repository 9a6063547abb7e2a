import EventBus
import Foundation

/// The events of a `POST /v1/events`, in the order given, each as the CloudEvents JSON the
/// bus takes (structured mode), from one of the three HTTP modes of CloudEvents:
///
/// - structured: `Content-Type: application/cloudevents+json`, the body is one event;
/// - batch: `Content-Type: application/cloudevents-batch+json`, the body is an array of events;
/// - binary: `ce-specversion`, `ce-id`, `ce-type`, `ce-source`, `ce-subject`, `ce-time`
///   (and any other `ce-` extension) headers, and the body, JSON, is the event's `data`.
///
/// Only the shape is checked here; the bus validates the events themselves (`bad_event`
/// naming the field) and deduplicates them.
public struct CloudEventRequest: Sendable, Equatable {
    /// How the request carried its events.
    public enum Mode: String, Sendable, Equatable {
        case structured, batch, binary
    }

    /// The mode of the request.
    public let mode: Mode
    /// The events, as structured-mode JSON, in the request's order.
    public let events: [[UInt8]]

    /// The most events one request carries: the bus's batch limit.
    public static let maxEvents = 1_000

    /// Reads the events of a request.
    ///
    /// - Parameters:
    ///   - contentType: The `Content-Type` header.
    ///   - headers: The request's headers as (name, value), any case; only `ce-` ones are read.
    ///   - body: The body.
    /// - Throws: ``HTTPProblem``: 415 for a media type that carries no event, 400 `bad_json`
    ///   for a body that is not JSON of the mode's shape, 400 `bad_event` for a missing
    ///   binary-mode header or an empty batch, 413 `too_large` for over 1,000 events.
    public init(contentType: String?, headers: [(name: String, value: String)], body: [UInt8]) throws(HTTPProblem) {
        let attributes = headers.compactMap { header -> (String, String)? in
            let name = header.name.lowercased()
            // Header values are percent-encoded (the CloudEvents HTTP binding, 3.1.3.2).
            return name.hasPrefix("ce-") ? (String(name.dropFirst(3)), header.value.removingPercentEncoding ?? header.value) : nil
        }
        let media = MediaType(header: contentType)
        switch media {
        case MediaType.cloudEvent?:
            mode = .structured
            events = [try Self.object(body, what: "a structured CloudEvent (application/cloudevents+json)")]
        case MediaType.cloudEventBatch?:
            mode = .batch
            events = try Self.batch(body)
        case let media? where media.isJSON && !attributes.isEmpty:
            mode = .binary
            events = [try Self.binary(attributes: attributes, contentType: media, body: body)]
        case let media? where !attributes.isEmpty:
            throw HTTPProblem(status: 415, code: HTTPProblem.unsupportedMediaType,
                              detail: "a binary-mode CloudEvent's data must be JSON (Content-Type: application/json), not \(media)")
        default:
            let given = media.map { "Content-Type \($0)" } ?? "no Content-Type"
            throw HTTPProblem(status: 415, code: HTTPProblem.unsupportedMediaType,
                              detail: "\(given): send application/cloudevents+json (one event), application/cloudevents-batch+json "
                                  + "(an array of events), or ce-* headers with an application/json body (binary mode)")
        }
    }

    /// The body as one JSON object, compact, or a `bad_json` problem naming `what` was expected.
    static func object(_ body: [UInt8], what: String) throws(HTTPProblem) -> [UInt8] {
        guard case .object = try parse(body, what: what) else {
            throw HTTPProblem(status: 400, code: ErrorCode.badJSON.wire, detail: "\(what) must be one JSON object")
        }
        return body
    }

    private static func parse(_ body: [UInt8], what: String) throws(HTTPProblem) -> JSONValue {
        do { return try JSONParser.parse(body) } catch {
            throw HTTPProblem(status: 400, code: ErrorCode.badJSON.wire, detail: "\(what): the body is not valid JSON \(error)")
        }
    }

    private static func batch(_ body: [UInt8]) throws(HTTPProblem) -> [[UInt8]] {
        let what = "a batch (application/cloudevents-batch+json)"
        guard case .array(let elements) = try parse(body, what: what) else {
            throw HTTPProblem(status: 400, code: ErrorCode.badJSON.wire, detail: "\(what) must be a JSON array of events")
        }
        guard !elements.isEmpty else {
            throw HTTPProblem(status: 400, code: ErrorCode.badEvent.wire, detail: "\(what) must hold 1 to \(maxEvents) events, not 0")
        }
        guard elements.count <= maxEvents else {
            throw HTTPProblem(status: 413, code: ErrorCode.tooLarge.wire,
                              detail: "\(what) holds \(elements.count) events, more than \(maxEvents) (the bus's batch limit)")
        }
        var events: [[UInt8]] = []
        for (index, element) in elements.enumerated() {
            guard case .object = element else {
                throw HTTPProblem(status: 400, code: ErrorCode.badJSON.wire, detail: "event \(index): must be a JSON object", event: index)
            }
            events.append(element.serialized())
        }
        return events
    }

    /// The headers a binary-mode request must carry, as CloudEvents attribute names.
    static let requiredAttributes = ["specversion", "id", "source", "type", "subject"]

    private static func binary(attributes: [(String, String)], contentType: MediaType, body: [UInt8]) throws(HTTPProblem) -> [UInt8] {
        for name in requiredAttributes where !attributes.contains(where: { $0.0 == name }) {
            throw HTTPProblem(status: 400, code: ErrorCode.badEvent.wire,
                              detail: "ce-\(name): a binary-mode CloudEvent needs the header ce-\(name)", field: "ce-\(name)", event: 0)
        }
        let data = try parse(body, what: "a binary-mode CloudEvent's data (the body)")
        var writer = JSONWriter()
        writer.beginObject()
        var seen: Set<String> = ["data", "datacontenttype"]
        // The required attributes first, in the order of docs/events.md, then the others as sent.
        let ordered = requiredAttributes.compactMap { name in attributes.first { $0.0 == name } }
            + attributes.filter { !requiredAttributes.contains($0.0) }
        for (name, value) in ordered where seen.insert(name).inserted {
            writer.key(name)
            writer.string(value)
        }
        writer.key("datacontenttype")
        writer.string(contentType.essence)
        writer.key("data")
        data.write(to: &writer)
        writer.endObject()
        return writer.bytes
    }
}
