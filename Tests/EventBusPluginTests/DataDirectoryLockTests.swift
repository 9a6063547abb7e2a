import EventBusPlugin
import Foundation
import Testing

/// One process at a time per plugin data directory.
@Suite struct DataDirectoryLockTests {
    static func freshDirectory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-lock-\(UUID().uuidString.prefix(8))").path + "/plugins/counter"
    }

    @Test func aSecondLockOnTheSameDirectoryIsRefusedNamingItUntilTheFirstIsReleased() throws {
        let directory = Self.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: directory).deletingLastPathComponent().deletingLastPathComponent().path) }
        var first: DataDirectoryLock? = try DataDirectoryLock(directory: directory, plugin: "counter")
        let error = #expect(throws: PluginError.self) { try DataDirectoryLock(directory: directory, plugin: "counter") }
        #expect(error?.description.contains("another copy of plugin counter is running with data dir \(directory)") == true,
                "\(error?.description ?? "")")
        #expect(first != nil)
        first = nil  // the descriptor closes, and the lock goes with it
        _ = try DataDirectoryLock(directory: directory, plugin: "counter")
    }

    @Test func theLockFileIsPrivateAndItsDescriptorClosesOnExec() throws {
        let previous = umask(0o022)
        defer { umask(previous) }
        let directory = Self.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: directory).deletingLastPathComponent().deletingLastPathComponent().path) }
        let lock = try DataDirectoryLock(directory: directory, plugin: "counter")
        #expect(lock.path == directory + "/lock")
        var status = stat()
        try #require(stat(lock.path, &status) == 0)
        #expect(status.st_mode & 0o7777 == 0o600)
        try #require(stat(directory, &status) == 0)
        #expect(status.st_mode & 0o7777 == 0o700)
        // Find this process's descriptor of the lock file and read its open flags.
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        let fd = try #require(descriptors.first { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == lock.path })
        let info = try String(contentsOfFile: "/proc/self/fdinfo/" + fd, encoding: .utf8)
        let flags = try #require(info.split(separator: "\n").first { $0.hasPrefix("flags:") }.flatMap { Int($0.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8) })
        #expect(flags & Int(O_CLOEXEC) != 0, "the lock's descriptor is O_CLOEXEC: \(info)")
        withExtendedLifetime(lock) {}
    }
}
