/// An exclusive lock on a plugin's data directory, held while the process lives, so that
/// a second copy of the plugin on the same directory refuses to start instead of sharing
/// its consumer and state with the first: a ``FileLock`` on `<directory>/lock`.
public final class DataDirectoryLock: Sendable {
    /// The lock file, `<directory>/lock`.
    public var path: String { lock.path }
    private let lock: FileLock

    /// Creates `directory` (0700) if missing and takes its lock.
    ///
    /// - Throws: ``PluginError`` naming the directory when another process holds the lock
    ///   ("another copy of plugin NAME is running with data dir DIR"), or when the directory
    ///   or the lock file cannot be made.
    public init(directory: String, plugin: String) throws(PluginError) {
        try PrivateDirectory.create(directory)
        let path = directory + "/lock"
        do {
            lock = try FileLock(path: path)
        } catch {
            switch error {
            case .held:
                throw PluginError("another copy of plugin \(plugin) is running with data dir \(directory) "
                    + "(it holds \(path)); stop it first, or give this copy a --data-dir of its own")
            case .system(let failure):
                throw PluginError(failure.description)
            }
        }
    }
}
