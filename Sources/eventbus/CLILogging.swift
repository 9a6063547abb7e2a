import ArgumentParser
import Logging
import Synchronization

/// Log levels as the command line spells them.
extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Process-wide logging of the CLI: swift-log to stderr, set up once.
enum CLILogging {
    private static let done = Mutex(false)

    /// Sends every log line to stderr at `level` or above, and returns a logger labelled `label`.
    static func logger(_ label: String, level: Logger.Level) -> Logger {
        let first = done.withLock { done in
            defer { done = true }
            return !done
        }
        if first {
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        }
        return Logger(label: label)
    }
}
