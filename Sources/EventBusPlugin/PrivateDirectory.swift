#if canImport(Glibc)
import Glibc
#endif

/// Folders only their owner may list or enter: a plugin's state is the
/// events it has seen, and no other local user should read it.
enum PrivateDirectory {
    /// Creates `path` and any missing parent with mode 0700, whatever the umask;
    /// folders that exist already are left as they are.
    static func create(_ path: String) throws(PluginError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, 0o700) == 0 {
                // mkdir applies the umask, which could only narrow the mode; set it exactly.
                guard chmod(prefix, 0o700) == 0 else {
                    throw PluginError("cannot chmod \(prefix) to 0700: \(String(cString: strerror(errno)))")
                }
            } else if errno != EEXIST {
                throw PluginError("cannot create directory \(prefix): \(String(cString: strerror(errno)))")
            }
        }
    }
}
