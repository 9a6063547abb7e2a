#if canImport(Glibc)
import Glibc
#endif

/// The safe defaults for the broker's endpoints (docs/security.md).
///
/// Without CURVE keys, anyone who reaches a socket can use every verb, so the
/// broker binds only where no one else can reach: loopback TCP, ipc and
/// inproc. ipc socket files are made private to the broker's user.
package enum BindPolicy {
    /// The option that allows binding elsewhere without keys.
    package static let insecureOption = "--allow-insecure-bind"

    /// Whether `endpoint` can only be reached from this machine.
    package static func isLocal(_ endpoint: String) -> Bool {
        if endpoint.hasPrefix("ipc://") || endpoint.hasPrefix("inproc://") { return true }
        guard endpoint.hasPrefix("tcp://") else { return false }
        let address = endpoint.dropFirst("tcp://".count)
        guard let colon = address.lastIndex(of: ":") else { return false }
        let host = address[..<colon]
        if host == "localhost" || host == "[::1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isNumber) && (Int(part) ?? 256) <= 255
        }
    }

    /// The endpoint libzmq is given to bind: `tcp://localhost:PORT` as `tcp://127.0.0.1:PORT`.
    ///
    /// libzmq binds interface names and addresses, not host names: given `localhost` it looks
    /// for an interface of that name and fails with ENODEV. Connecting to `localhost` works
    /// as it is (libzmq resolves names when it connects).
    package static func bindable(_ endpoint: String) -> String {
        let prefix = "tcp://localhost:"
        guard endpoint.hasPrefix(prefix) else { return endpoint }
        return "tcp://127.0.0.1:" + endpoint.dropFirst(prefix.count)
    }

    /// Refuses a non-local `endpoint` when neither keys nor the insecure option are configured.
    static func check(_ endpoint: String, option: String, config: BrokerConfig) throws(BrokerError) {
        guard config.security == nil, !config.allowInsecureBind, !isLocal(endpoint) else { return }
        throw BrokerError(.refusedSetting, "refusing to bind \(option) \(endpoint) without CURVE keys: anyone who reaches it could "
            + "publish and read every stage. Bind a loopback address (tcp://127.0.0.1:PORT) or ipc://, "
            + "configure keys (--security FILE, see docs/security.md), or pass \(insecureOption) to accept the risk")
    }

    /// Refuses an `ipc://` endpoint whose socket file another process listens on.
    ///
    /// libzmq binds an ipc path by removing whatever file is there: a second broker given
    /// the first one's path would take it over silently, and the first, still running,
    /// would get no new peer. A connect tells a live socket (refused here) from a file
    /// left by a process that died (`ECONNREFUSED`: libzmq replaces it). Abstract
    /// sockets (`ipc://@name`) have no file; the kernel refuses their second bind itself.
    static func refuseIPCInUse(_ endpoint: String, option: String) throws(BrokerError) {
        guard endpoint.hasPrefix("ipc://") else { return }
        let path = String(endpoint.dropFirst("ipc://".count))
        guard !path.hasPrefix("@"), path != "*" else { return }
        // A broker of this process that just stopped may still have its listener open for
        // a moment (libzmq closes it on its reaper thread, later on a loaded machine): only
        // a listener that stays is another's. Probed for up to two seconds.
        for attempt in 0..<40 {
            guard listens(path) else { return }
            if attempt < 39 { usleep(50_000) }
        }
        throw BrokerError(.endpointInUse, "refusing to bind \(option) \(endpoint): another process listens on that socket file "
            + "(another broker?). Stop it first, or choose another path")
    }

    /// Whether a Unix stream socket at `path` accepts a connection now.
    private static func listens(_ path: String) -> Bool {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else { return false }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }  // libzmq refuses it itself
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return connected == 0
    }

    /// Gives the socket file of a bound `ipc://` endpoint `mode` (abstract sockets have no file).
    static func restrictIPC(_ boundEndpoint: String, mode: mode_t) throws(BrokerError) {
        guard boundEndpoint.hasPrefix("ipc://") else { return }
        let path = String(boundEndpoint.dropFirst("ipc://".count))
        guard !path.hasPrefix("@") else { return }
        if chmod(path, mode) != 0 {
            throw BrokerError(.dataDirectory, "cannot chmod the ipc socket \(path) to 0\(String(mode, radix: 8)): \(String(cString: strerror(errno)))")
        }
    }
}
