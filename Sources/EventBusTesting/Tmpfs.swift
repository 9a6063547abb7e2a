import Foundation

/// A small filesystem of a test's own, to fill up: a tmpfs mounted on a fresh directory
/// (the tests run as root, as `make test` does here), unmounted and removed afterwards.
public enum Tmpfs {
    /// Runs `body` with a tmpfs of `size` (such as `4m`) mounted; its argument is the mount point.
    public static func with(_ label: String, size: String, _ body: (String) async throws -> Void) async throws {
        let mountPoint = TemporaryDirectory.url(label).path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try await RunningProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", mountPoint])
        guard mounted.status == 0 else { throw ProcessError("mounting a small tmpfs failed: \(mounted.standardError)") }
        func unmount() async {
            _ = try? await RunningProcess.run("/bin/umount", ["-l", mountPoint])
            try? FileManager.default.removeItem(atPath: mountPoint)
        }
        do {
            try await body(mountPoint)
        } catch {
            await unmount()
            throw error
        }
        await unmount()
    }
}
