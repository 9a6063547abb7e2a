#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging

/// Durable consumer offsets: each consumer's name and last acknowledged SEQ.
///
/// Kept in `<directory>/consumers.json` as one JSON object,
/// `{"name": seq, …}`. Saving replaces the file atomically.
public final class OffsetStore {
    private let directory: String
    private let path: String
    private let logger: Logger

    /// Opens the store in `directory`, creating the directory if missing.
    ///
    /// - Parameters:
    ///   - directory: The data directory.
    ///   - logger: Where to report a corrupt file.
    public init(directory: String, logger: Logger) throws(LogError) {
        self.directory = directory
        self.path = directory + "/consumers.json"
        self.logger = logger
        try SystemFile.makeDirectories(directory)
    }

    /// The saved offsets; empty when there is no file yet.
    ///
    /// A file that cannot be read or parsed is logged and treated as empty:
    /// consumers then start again from the beginning, which at-least-once
    /// delivery allows.
    public func load() -> [String: UInt64] {
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        do {
            return try JSONDecoder().decode([String: UInt64].self, from: data)
        } catch {
            logger.error(
                "consumer offsets file is corrupt; starting with no offsets",
                metadata: ["log.file": "\(path)", "error.type": "\(error)"])
            return [:]
        }
    }

    /// Saves `offsets`, replacing the file atomically: writes a temporary
    /// file, fsyncs it, renames it over `consumers.json`, fsyncs the directory.
    public func save(_ offsets: [String: UInt64]) throws(LogError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(offsets)
        } catch {
            throw LogError(.invalidArgument, "cannot encode consumer offsets: \(error)")
        }
        let temporary = path + ".tmp"
        let fd = try SystemFile.open(temporary, O_WRONLY | O_CREAT | O_TRUNC)
        do {
            try SystemFile.pwriteAll(fd, [UInt8](data), at: 0, path: temporary)
            try SystemFile.fullSync(fd, path: temporary)
        } catch {
            Glibc.close(fd)
            _ = Glibc.unlink(temporary)
            throw error
        }
        Glibc.close(fd)
        try SystemFile.rename(temporary, path)
        try SystemFile.syncDirectory(directory)
    }
}
