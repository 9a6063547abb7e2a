import EventBus
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A ``PluginStore`` in one file: `<directory>/state.snapshot`.
///
/// The file is `"EBSNAP1\n"`, the SEQ (8 bytes, little-endian), the snapshot's
/// length (8 bytes), its CRC32C (4 bytes), then the snapshot. A save writes a
/// temporary file, fsyncs it, renames it over the old one and fsyncs the
/// directory, so a crash leaves either the old or the new state, never a mix.
/// The folder is made 0700 and the file 0600, whatever the umask: the state
/// holds what the plugin learnt from the events, for its owner only.
public struct FileSnapshotStore: PluginStore {
    /// The folder holding the snapshot.
    public let directory: String
    static let magic = Array("EBSNAP1\n".utf8)

    /// A store in `directory`, created (0700) if missing.
    public init(directory: String) throws {
        self.directory = directory
        try PrivateDirectory.create(directory)
    }

    private var path: String { directory + "/state.snapshot" }

    public func load() throws -> (snapshot: [UInt8], seq: UInt64)? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let bytes = [UInt8](data)
        let header = Self.magic.count + 20
        guard bytes.count >= header, Array(bytes.prefix(Self.magic.count)) == Self.magic else {
            throw PluginError("\(path): not a snapshot file")
        }
        func integer(_ offset: Int, _ width: Int) -> UInt64 {
            (0..<width).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
        }
        let seq = integer(Self.magic.count, 8)
        let length = Int(integer(Self.magic.count + 8, 8))
        let crc = UInt32(integer(Self.magic.count + 16, 4))
        guard bytes.count == header + length else { throw PluginError("\(path): snapshot length does not match the file") }
        let snapshot = Array(bytes[header...])
        guard snapshot.withUnsafeBytes({ CRC32C.checksum($0) }) == crc else {
            throw PluginError("\(path): snapshot checksum mismatch")
        }
        return (snapshot, seq)
    }

    public func save(snapshot: [UInt8], seq: UInt64) throws {
        var bytes = Self.magic
        bytes.reserveCapacity(bytes.count + 20 + snapshot.count)
        func append(_ value: UInt64, _ width: Int) {
            for index in 0..<width { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
        }
        append(seq, 8)
        append(UInt64(snapshot.count), 8)
        append(UInt64(snapshot.withUnsafeBytes { CRC32C.checksum($0) }), 4)
        bytes.append(contentsOf: snapshot)
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PluginError("cannot create \(temporary): errno \(errno)") }
        // open applied the umask, which could only narrow the mode; set it exactly.
        guard fchmod(fd, 0o600) == 0 else {
            let code = errno
            close(fd)
            throw PluginError("cannot chmod \(temporary) to 0600: errno \(code)")
        }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }  // non-empty: it holds the header
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                close(fd)
                throw PluginError("cannot write \(temporary): errno \(errno)")
            }
            written += n
        }
        guard fsync(fd) == 0 else {
            close(fd)
            throw PluginError("cannot fsync \(temporary): errno \(errno)")
        }
        close(fd)
        guard rename(temporary, path) == 0 else { throw PluginError("cannot rename \(temporary): errno \(errno)") }
        let dir = open(directory, O_RDONLY | O_CLOEXEC)
        if dir >= 0 {
            fsync(dir)
            close(dir)
        }
    }
}
