#if canImport(Glibc)
import Glibc
#endif

/// Reads and writes the one-line Z85 key files of `eventbus keygen`.
///
/// A key file holds one 40-character Z85 key on its own line; lines starting
/// with `#` are comments. A secret key file is created with mode 0600 and is
/// refused when its group or others may read it (as ssh refuses such keys).
public enum CurveKeyFile {
    /// Writes `key` to `path` with `mode`, replacing any file there.
    ///
    /// The file is created with `mode` from the start (no window where a secret
    /// is readable by others) and `fchmod`ed to it in case it existed.
    public static func write(_ key: String, comment: String, to path: String, mode: mode_t) throws(ZMQError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw ZMQError(code: errno, operation: "open \(path)") }
        defer { close(descriptor) }
        guard fchmod(descriptor, mode) == 0 else { throw ZMQError(code: errno, operation: "fchmod \(path)") }
        let bytes = Array("# \(comment)\n\(key)\n".utf8)
        var written = 0
        while written < bytes.count {
            let rc = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if rc < 0 {
                if errno == EINTR { continue }
                throw ZMQError(code: errno, operation: "write \(path)")
            }
            written += rc
        }
        guard fsync(descriptor) == 0 else { throw ZMQError(code: errno, operation: "fsync \(path)") }
    }

    /// Reads the key in the file at `path`.
    ///
    /// - Parameter secret: The file holds a secret key: refuse it when its mode
    ///   lets the group or others read or write it.
    /// - Throws: ``CurveKeyFileError`` naming the file and what is wrong.
    public static func read(_ path: String, secret: Bool) throws(CurveKeyFileError) -> String {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw CurveKeyFileError(path: path, reason: String(cString: strerror(errno)))
        }
        if secret && (status.st_mode & 0o077) != 0 {
            throw CurveKeyFileError(path: path, reason: String(format8: status.st_mode & 0o777)
                + " lets others read a secret key; chmod 600 it")
        }
        guard let file = fopen(path, "r") else {
            throw CurveKeyFileError(path: path, reason: String(cString: strerror(errno)))
        }
        defer { fclose(file) }
        var content: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            content += buffer.prefix(count)
            if content.count > 65_536 { throw CurveKeyFileError(path: path, reason: "too large for a key file") }
        }
        let lines = String(decoding: content, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingSpaces }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        guard lines.count == 1, let key = lines.first, CurveKeyPair.isValidKey(key) else {
            throw CurveKeyFileError(path: path, reason: "must hold exactly one 40-character Z85 key line")
        }
        return key
    }
}

/// A key file that cannot be used.
public struct CurveKeyFileError: Error, Sendable, CustomStringConvertible {
    /// The file.
    public let path: String
    /// What is wrong with it.
    public let reason: String
    public var description: String { "key file \(path): \(reason)" }
}

extension String {
    /// `mode` in octal, as `ls` users read it (`0644`).
    init(format8 mode: mode_t) {
        self = "mode 0" + String(mode, radix: 8)
    }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
    }
}
