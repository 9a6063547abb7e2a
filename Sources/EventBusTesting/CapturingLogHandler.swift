import Foundation
import Logging

/// A log handler that keeps every message, for checking what was logged.
public final class CapturingLogHandler: LogHandler, @unchecked Sendable {
    /// One captured message.
    public struct Entry: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: Logger.Metadata
    }

    private let lock = NSLock()
    private var stored: [Entry] = []
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public init() {}

    /// Every message so far, in order.
    public var entries: [Entry] { lock.withLock { stored } }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        lock.withLock {
            stored.append(Entry(level: event.level, message: "\(event.message)", metadata: event.metadata ?? [:]))
        }
    }
}
