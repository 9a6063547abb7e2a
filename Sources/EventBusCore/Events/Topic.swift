/// Event topics: `STAGE/SUBJECT/TYPE` (docs/protocol.md, "Topics and stages").
public enum Topic {
    /// The topic bytes of an event with `subject` and `type` at `stage`,
    /// for example `out/messaging:general/message.read`.
    ///
    /// Subjects never contain `/` (the validator refuses them), so the three
    /// segments can always be told apart.
    public static func make(stage: String, subject: String, type: String) -> [UInt8] {
        var topic: [UInt8] = []
        topic.reserveCapacity(stage.utf8.count + subject.utf8.count + type.utf8.count + 2)
        topic.append(contentsOf: stage.utf8)
        topic.append(UInt8(ascii: "/"))
        topic.append(contentsOf: subject.utf8)
        topic.append(UInt8(ascii: "/"))
        topic.append(contentsOf: type.utf8)
        return topic
    }

    /// The topic bytes of an event whose subject and type are given as bytes.
    ///
    /// Copied through buffer pointers into storage of the final size: the broker makes one per
    /// event, and appending the parts retained and released each part's storage. The storage
    /// comes from ``ZeroedBytes`` (the standard library's initializers look up metadata).
    public static func make(stage: [UInt8], subject: ArraySlice<UInt8>, type: ArraySlice<UInt8>) -> [UInt8] {
        let count = stage.count + subject.count + type.count + 2
        return ZeroedBytes.array(count: count) { topic in
            // Safe: a buffer of count ≥ 2 has a base address.
            var next = topic.baseAddress!
            func put(_ part: UnsafeBufferPointer<UInt8>) {
                if let bytes = part.baseAddress { next.initialize(from: bytes, count: part.count) }
                next += part.count
            }
            stage.withUnsafeBufferPointer(put)
            next.initialize(to: UInt8(ascii: "/"))
            next += 1
            subject.withUnsafeBufferPointer(put)
            next.initialize(to: UInt8(ascii: "/"))
            next += 1
            type.withUnsafeBufferPointer(put)
        }
    }

    /// The subscription prefix for every event of `subject` at `stage`:
    /// `STAGE/SUBJECT/`, ending in `/` so that a longer subject does not match.
    public static func prefix(stage: String, subject: String) -> [UInt8] {
        make(stage: stage, subject: subject, type: "")
    }
}
