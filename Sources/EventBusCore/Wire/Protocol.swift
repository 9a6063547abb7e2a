/// Constants of the wire protocol (EB1) shared by the broker and its clients.
public enum WireProtocol {
    /// Frame 0 of every command message.
    public static let signature: [UInt8] = Array("EB1".utf8)
    /// The default command endpoint (ROUTER).
    public static let defaultCommandEndpoint = "tcp://127.0.0.1:7750"
    /// The default stream endpoint (XPUB).
    public static let defaultStreamEndpoint = "tcp://127.0.0.1:7751"
    /// The longest correlation frame.
    public static let maxCorrelationBytes = 64
    /// The most events in one PUB.
    public static let maxBatchEvents = 1_000
    /// The most bytes of events in one PUB.
    public static let maxBatchBytes = 4 * 1024 * 1024
    /// The default largest event.
    public static let defaultMaxEventBytes = 65_536
    /// Highest CREDIT a consumer may ask for.
    public static let maxCredit = 65_536

    /// The features a HELLO answer's JSON lists (`batch`, `compact_ok`, `forward`, `pubs`,
    /// docs/protocol.md, "Extensions"): what this broker adds to the base protocol; none when it lists nothing.
    public static func helloFeatures(_ info: [UInt8]) -> Set<String> {
        guard let value = try? JSONParser.parse(info), case .array(let features)? = value["features"] else { return [] }
        return Set(features.compactMap(\.stringValue))
    }

    /// Whether `name` may name a service (a REQ's SERVICE, HELLO's `services`): `[a-z0-9_.-]{1,64}`.
    package static func isServiceName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { byte in
            (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5f || byte == 0x2e || byte == 0x2d
        }
    }
}
