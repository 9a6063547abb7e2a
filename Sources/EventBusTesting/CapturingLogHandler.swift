import Foundation
import Logging

/// A log handler that keeps every message, for checking what was logged. Its state is
/// behind one lock, since every copy of a `Logger` made with it shares it.
public final class CapturingLogHandler: LogHandler, @unchecked Sendable {
    /// One captured message.
    public struct Entry: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: Logger.Metadata
    }

    private let lock = NSLock()
    private var stored: [Entry] = []
    private var storedMetadata: Logger.Metadata = [:]
    private var storedLevel: Logger.Level = .trace

    public var metadata: Logger.Metadata {
        get { lock.withLock { storedMetadata } }
        set { lock.withLock { storedMetadata = newValue } }
    }

    public var logLevel: Logger.Level {
        get { lock.withLock { storedLevel } }
        set { lock.withLock { storedLevel = newValue } }
    }

    public init() {}

    /// Every message so far, in order.
    public var entries: [Entry] { lock.withLock { stored } }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { lock.withLock { storedMetadata[key] } }
        set { lock.withLock { storedMetadata[key] = newValue } }
    }

    public func log(event: LogEvent) {
        lock.withLock {
            stored.append(Entry(level: event.level, message: "\(event.message)", metadata: event.metadata ?? [:]))
        }
    }
}
