import Foundation

/// Fresh directories under the system's temporary folder, one per test or helper, named
/// `<label>-<8 hex digits>` so that a leftover tells which test left it.
public enum TemporaryDirectory {
    /// A fresh path, not created: for a test that wants the directory not to exist.
    public static func url(_ label: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString.prefix(8))")
    }

    /// A fresh directory, created; the caller removes it.
    public static func create(_ label: String) throws -> URL {
        let directory = url(label)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Runs `body` with a fresh directory, removed afterwards whether `body` threw or not.
    public static func with<T>(_ label: String, _ body: (URL) async throws -> T) async throws -> T {
        let directory = try create(label)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }
}
