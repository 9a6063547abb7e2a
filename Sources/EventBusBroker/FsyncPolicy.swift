/// When the broker forces appended events to stable storage.
///
/// Every policy survives a crash of the broker process (a confirmed event has
/// been written to the kernel); they differ on a power loss or kernel crash.
public enum FsyncPolicy: String, Sendable, CaseIterable {
    /// A PUB is confirmed only after an fsync that covers it (group commit:
    /// one fsync covers every PUB that arrived meanwhile). The default.
    case always
    /// Confirm after the write; fsync at most every `fsyncIntervalMilliseconds`.
    case periodic
    /// Never fsync; the kernel writes back when it likes.
    case off
}
