#if canImport(Glibc)
import Glibc
#endif

/// The data directory is the broker's user's alone (docs/security.md).
///
/// The log holds every event as published, `message.read` included, before any
/// privacy filter ran; a data directory that group or others may read, write or
/// enter would hand it to every local user. The broker creates the directory
/// 0700 (and everything in it 0700 or 0600, whatever the umask) and refuses to
/// start on one whose mode gives group or others any access, unless told
/// otherwise.
enum DataDirectoryPolicy {
    /// The option that allows a data directory open to group or others.
    static let sharedOption = "--allow-shared-data-dir"

    /// Creates the data directory (0700) if missing, then checks its mode.
    static func prepare(_ config: BrokerConfig) throws(BrokerError) {
        let path = config.dataDirectory
        do { try SystemFile.makeDirectories(path) } catch { throw BrokerError(.dataDirectory, error.description) }
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw BrokerError(.dataDirectory, "cannot stat the data directory \(path): \(String(cString: strerror(errno)))")
        }
        try check(path, mode: status.st_mode & 0o7777, config: config)
    }

    /// Refuses `mode` for the data directory at `path` when it gives group or others any access.
    static func check(_ path: String, mode: mode_t, config: BrokerConfig) throws(BrokerError) {
        guard mode & 0o077 != 0, !config.allowSharedDataDirectory else { return }
        throw BrokerError(.refusedSetting, "refusing to use the data directory \(path): its mode \(octal(mode)) lets group or others "
            + "read, write or enter it, and its log holds every event unfiltered (message.read included). "
            + "Run chmod 700 \(path), or pass \(sharedOption) (allow_shared_data_dir: true in the config file) to accept the risk")
    }

    /// `mode` as `chmod` writes it: 0755.
    static func octal(_ mode: mode_t) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
