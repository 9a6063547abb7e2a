import EventBus
#if canImport(Glibc)
import Glibc
#endif

/// Thin wrappers over the POSIX file calls the log uses, throwing ``LogError``.
enum SystemFile {
    /// The current `errno` as a sentence.
    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    static func ioError(_ what: String, _ path: String, _ code: Int32 = errno) -> LogError {
        LogError(.io, "\(what) \(path): \(describe(code))", errno: code)
    }

    /// Opens `path`; returns the descriptor.
    ///
    /// With `O_CREAT` the file gets exactly `mode` (by default 0600: the log and
    /// the offsets are for the broker's user only), whatever the umask.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws(LogError) -> Int32 {
        let fd = path.withCString { Glibc.open($0, flags | O_CLOEXEC, mode) }
        if fd < 0 { throw ioError("cannot open", path) }
        // open applied the umask, which could only narrow the mode; set it exactly.
        if flags & O_CREAT != 0 && fchmod(fd, mode) != 0 {
            let code = errno
            Glibc.close(fd)
            throw ioError("cannot chmod", path, code)
        }
        return fd
    }

    /// Writes all `count` bytes at `offset`, retrying short writes.
    ///
    /// - Parameter failAfter: A test hook: write at most this many bytes, then fail with `ENOSPC`.
    static func pwriteAll(
        _ fd: Int32, _ p: UnsafeRawPointer, _ count: Int, at offset: Int, path: String, failAfter: Int? = nil
    ) throws(LogError) {
        var done = 0
        while done < count {
            var chunk = count - done
            if let failAfter {
                if done >= failAfter { throw ioError("cannot write", path, ENOSPC) }
                chunk = min(chunk, failAfter - done)
            }
            let n = Glibc.pwrite(fd, p + done, chunk, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw ioError("cannot write", path)
            }
            done += n
        }
    }

    /// Writes all of `bytes` at `offset`.
    static func pwriteAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int, path: String) throws(LogError) {
        guard !bytes.isEmpty else { return }
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 8)
        defer { copy.deallocate() }
        copy.copyBytes(from: bytes)
        // Non-empty allocation: it has a base address.
        try pwriteAll(fd, copy.baseAddress!, copy.count, at: offset, path: path)
    }

    /// Reads up to `count` bytes at `offset`, retrying short reads; returns fewer only at end of file.
    static func preadAll(
        _ fd: Int32, _ p: UnsafeMutableRawPointer, _ count: Int, at offset: Int, path: String
    ) throws(LogError) -> Int {
        var done = 0
        while done < count {
            let n = Glibc.pread(fd, p + done, count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw ioError("cannot read", path)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// The size of the open file `fd`.
    static func size(_ fd: Int32, path: String) throws(LogError) -> Int {
        var st = stat()
        if fstat(fd, &st) != 0 { throw ioError("cannot stat", path) }
        return Int(st.st_size)
    }

    static func truncate(_ fd: Int32, to size: Int, path: String) throws(LogError) {
        while ftruncate(fd, off_t(size)) != 0 {
            if errno != EINTR { throw ioError("cannot truncate", path) }
        }
    }

    static func dataSync(_ fd: Int32, path: String) throws(LogError) {
        while fdatasync(fd) != 0 {
            if errno != EINTR { throw ioError("cannot fdatasync", path) }
        }
    }

    static func fullSync(_ fd: Int32, path: String) throws(LogError) {
        while fsync(fd) != 0 {
            if errno != EINTR { throw ioError("cannot fsync", path) }
        }
    }

    /// Makes the entries of the directory at `path` (creations, removals, renames) durable.
    static func syncDirectory(_ path: String) throws(LogError) {
        let fd = try open(path, O_RDONLY | O_DIRECTORY)
        defer { Glibc.close(fd) }
        try fullSync(fd, path: path)
    }

    static func rename(_ from: String, _ to: String) throws(LogError) {
        if Glibc.rename(from, to) != 0 { throw ioError("cannot rename \(from) to", to) }
    }

    static func unlink(_ path: String) throws(LogError) {
        if Glibc.unlink(path) != 0 && errno != ENOENT { throw ioError("cannot remove", path) }
    }

    /// Creates `path` and its parents if they are missing, each with mode 0700
    /// whatever the umask (the broker's user only); folders that exist already
    /// are left as they are.
    static func makeDirectories(_ path: String) throws(LogError) {
        do { try PrivateFiles.makeDirectories(path) } catch {
            throw LogError(.io, error.description, errno: error.code)
        }
    }

    /// The names in directory `path`, without `.` and `..`.
    static func list(_ path: String) throws(LogError) -> [String] {
        guard let dir = opendir(path) else { throw ioError("cannot list", path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                // d_name is a NUL-terminated C string inside a fixed array.
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
