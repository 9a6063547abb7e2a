import Foundation

/// A small filesystem of a test's own, to fill up: a tmpfs mounted on a directory (the tests
/// and the fault campaign run as root, as `make test` does here), unmounted lazily afterwards.
public enum Tmpfs {
    /// Runs `body` with a tmpfs of `size` (such as `4m`) mounted on a fresh directory; its
    /// argument is the mount point, unmounted and removed afterwards.
    public static func with(_ label: String, size: String, _ body: (String) async throws -> Void) async throws {
        let mountPoint = TemporaryDirectory.url(label).path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        try mount(at: mountPoint, size: size)
        func cleanUp() {
            unmount(mountPoint)
            try? FileManager.default.removeItem(atPath: mountPoint)
        }
        do {
            try await body(mountPoint)
        } catch {
            cleanUp()
            throw error
        }
        cleanUp()
    }

    /// Mounts a tmpfs of `size` (such as `512m`) on the existing directory `path`, with
    /// `mode` (such as `0700`) for its root if given.
    public static func mount(at path: String, size: String, mode: String? = nil) throws {
        let options = "size=\(size)" + (mode.map { ",mode=\($0)" } ?? "")
        let (status, error) = try run("/bin/mount", ["-t", "tmpfs", "-o", options, "tmpfs", path])
        guard status == 0 else { throw ProcessError("mounting a tmpfs of \(size) on \(path) failed: \(error)") }
    }

    /// Whether a tmpfs is mounted on `path`.
    public static func isMounted(_ path: String) -> Bool {
        (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8))?.contains(" \(path) tmpfs ") == true
    }

    /// Unmounts the tmpfs on `path`, if there is one; lazily, as a process may still hold a file.
    public static func unmount(_ path: String) {
        guard isMounted(path) else { return }
        _ = try? run("/bin/umount", ["-l", path])
    }

    /// Runs a command to its end: its status and standard error.
    private static func run(_ path: String, _ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let error = Pipe()
        process.standardError = error
        try process.run()
        let text = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
