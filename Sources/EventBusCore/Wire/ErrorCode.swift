/// The error codes of the wire protocol (EB1), with their wire spelling defined here once.
public enum ErrorCode: String, Sendable, CaseIterable, Codable {
    /// Wrong signature, missing frames, CORR over 64 bytes.
    case badFrame = "bad_frame"
    /// Unknown verb.
    case badVerb = "bad_verb"
    /// A frame that must be JSON is not valid UTF-8 JSON.
    case badJSON = "bad_json"
    /// A verb's argument is malformed or out of range, or ACK/CANCEL name no consumer of this peer.
    case badArgs = "bad_args"
    /// The envelope or `data` fails validation.
    case badEvent = "bad_event"
    /// A type not in the catalogue published to stage `in`.
    case unknownType = "unknown_type"
    /// An event over `max_event_bytes`, or a batch over 1,000 events / 4 MiB.
    case tooLarge = "too_large"
    /// This peer may not do that (only with keys and roles configured).
    case forbidden
    /// The STAGE is not configured.
    case unknownStage = "unknown_stage"
    /// No service of that name.
    case unknownService = "unknown_service"
    /// A REQ's method is unknown or its params fail validation.
    case badRequest = "bad_request"
    /// A REQ names a channel or message the service does not know.
    case notFound = "not_found"
    /// A REQ got no answer in time.
    case timeout
    /// The broker cannot take more now; nothing was appended; retry later.
    case busy

    /// The code as it travels in an `ERR` reply.
    public var wire: String { rawValue }
}
