import NATS

/// Where a stage's events live in JetStream: one stream per stage, one subject per stream
/// (docs/scale-out.md, "Streams and subjects").
///
/// Stage names are `[a-z0-9_-]{1,64}` (or `in`, `out`, `diag`), which are valid in stream
/// names and subject tokens alike, so the mapping needs no escaping: stage `in` is stream
/// `EVENTBUS_in` on subject `eventbus.in`. A partitioned stage (a later issue) adds a
/// token: `eventbus.in.<partition>` in stream `EVENTBUS_in_<partition>`.
public struct StageStream: Sendable, Equatable, Hashable {
    /// The stream names' prefix.
    public static let streamPrefix = "EVENTBUS_"
    /// The subjects' first token.
    public static let subjectPrefix = "eventbus."

    /// The stage, such as `in` or `receipt-reducer`.
    public let stage: String

    public init(stage: String) { self.stage = stage }

    /// The stream's name: `EVENTBUS_<stage>`.
    public var name: String { Self.streamPrefix + stage }

    /// The subject its events are published on: `eventbus.<stage>`.
    public var subject: String { Self.subjectPrefix + stage }

    /// The stream's configuration: file storage, `replicas` copies, and JetStream's
    /// duplicate window standing in for the broker's dedup window.
    public func config(replicas: Int, duplicateWindow: Duration) -> StreamConfig {
        StreamConfig(name: name, subjects: [subject], storage: .file, replicas: replicas, duplicateWindow: duplicateWindow)
    }
}
