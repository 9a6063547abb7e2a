import Foundation

/// A publisher's record of what the broker confirmed: one line `<workload line> <SEQ>` per
/// confirmed event, appended with write(2) as each OK arrives, so that a SIGKILL loses at
/// most the confirms not yet written (the events are then published again, same ids).
struct ConfirmFile {
    let path: String

    /// Every (line, SEQ) recorded so far; a torn last line is left out.
    func read() -> [(line: Int, seq: UInt64)] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { entry in
            let parts = entry.split(separator: " ")
            guard parts.count == 2, let line = Int(parts[0]), let seq = UInt64(parts[1]) else { return nil }
            return (line, seq)
        }
    }

    /// Opens the file for appending, creating it if missing.
    func appender() throws -> FileHandle {
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else { throw ChaosRunError("cannot create \(path)") }
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        return handle
    }
}
