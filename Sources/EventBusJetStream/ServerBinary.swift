import Foundation

/// Finding the `nats-server` binary that `eventbus cluster up` runs.
public enum ServerBinary {
    /// The variable naming the binary; it wins over `PATH`.
    public static let environmentVariable = "EVENTBUS_NATS_SERVER"

    /// `$EVENTBUS_NATS_SERVER` when set, else the first executable `nats-server` on `PATH`.
    ///
    /// - Throws: ``ClusterError/serverNotFound(searched:)`` naming where it looked.
    public static func find(environment: [String: String] = ProcessInfo.processInfo.environment) throws(ClusterError) -> String {
        if let path = environment[environmentVariable], !path.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw .serverNotFound(searched: ["\(environmentVariable)=\(path) (not executable)"])
            }
            return path
        }
        let directories = (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for directory in directories {
            let candidate = "\(directory)/nats-server"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw .serverNotFound(searched: ["$\(environmentVariable) (unset)", "PATH (\(directories.count) directories)"])
    }
}
