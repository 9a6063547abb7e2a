import EventBusPlugin
import Foundation
import Testing

/// A plugin's state is its owner's alone, whatever the umask.
@Suite(.serialized) struct FileSnapshotStoreTests {
    static func mode(_ path: String) throws -> mode_t {
        var status = stat()
        try #require(stat(path, &status) == 0, "cannot stat \(path)")
        return status.st_mode & 0o7777
    }

    @Test func underUmask022TheStoreFoldersAndSnapshotAreTheOwnersOnly() throws {
        let previous = umask(0o022)
        defer { umask(previous) }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("eventbus-snap-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try FileSnapshotStore(directory: root + "/plugins/counter")
        try store.save(snapshot: Array("{}".utf8), seq: 7)
        #expect(try store.load()?.seq == 7)
        for folder in [root, root + "/plugins", root + "/plugins/counter"] {
            #expect(try Self.mode(folder) == 0o700, "\(folder)")
        }
        #expect(try Self.mode(root + "/plugins/counter/state.snapshot") == 0o600)
    }
}
