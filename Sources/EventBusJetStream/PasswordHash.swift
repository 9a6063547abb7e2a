import CCrypt

/// bcrypt hashes of the cluster users' passwords (libxcrypt's `$2b$`), the form
/// nats-server accepts in place of a password in its `authorization` block, so
/// that a server's configuration file holds no password.
///
/// A namespace over two thread-safe libxcrypt calls: `crypt_gensalt_rn` (a
/// salt from the system's random source) and `crypt_rn` (no static buffer).
public enum PasswordHash {
    /// The bcrypt cost: 2^10 rounds, about 64 ms per hash on the 2-core
    /// machine of docs/performance.md. A server checks it at each connect.
    /// The generated passwords are 32 random letters and digits (190 bits),
    /// so the cost guards a configuration file, not a guessable password.
    public static let cost = 10

    /// `password`'s bcrypt hash with a fresh random salt: `$2b$10$` then 53 characters.
    ///
    /// - Throws: ``ClusterError/cannotHash(reason:)`` when libxcrypt has no
    ///   bcrypt or no random source.
    public static func bcrypt(_ password: String, cost: Int = cost) throws(ClusterError) -> String {
        var salt = [CChar](repeating: 0, count: Int(CRYPT_GENSALT_OUTPUT_SIZE))
        // No random bytes given: libxcrypt reads the system's random source.
        guard crypt_gensalt_rn("$2b$", UInt(cost), nil, 0, &salt, Int32(salt.count)) != nil else {
            throw .cannotHash(reason: "crypt_gensalt_rn found no bcrypt ($2b$) or no random source")
        }
        guard let hash = crypt(password, setting: salt) else {
            throw .cannotHash(reason: "crypt_rn refused the bcrypt setting")
        }
        return hash
    }

    /// Whether `hash` is `password`'s bcrypt hash: what a server checks at connect.
    public static func verify(_ password: String, hash: String) -> Bool {
        guard hash.hasPrefix("$2"), let computed = crypt(password, setting: Array(hash.utf8CString)) else { return false }
        // Both are public-format strings of the same length; compare every byte.
        let a = Array(computed.utf8), b = Array(hash.utf8)
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// `crypt_rn(password, setting)`, or nil when libxcrypt refuses the setting.
    private static func crypt(_ password: String, setting: [CChar]) -> String? {
        let size = MemoryLayout<crypt_data>.size
        let data = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<crypt_data>.alignment)
        defer {
            // The work area held the password; clear it before giving it back.
            data.initializeMemory(as: UInt8.self, repeating: 0, count: size)
            data.deallocate()
        }
        data.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        guard let output = crypt_rn(password, setting, data, Int32(size)) else { return nil }
        return String(cString: output)
    }
}
