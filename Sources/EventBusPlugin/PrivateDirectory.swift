/// Folders only their owner may list or enter: a plugin's state is the
/// events it has seen, and no other local user should read it.
enum PrivateDirectory {
    /// Creates `path` and any missing parent with mode 0700, whatever the umask;
    /// folders that exist already are left as they are (``PrivateFiles/makeDirectories(_:)``).
    static func create(_ path: String) throws(PluginError) {
        do { try PrivateFiles.makeDirectories(path) } catch { throw PluginError(error.description) }
    }
}
