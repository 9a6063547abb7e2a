import Foundation

/// Figures of a living process's `/proc/PID/status`.
public enum ProcessStatus {
    /// The field `field` (`VmRSS`, `VmHWM`…) of process `pid`, in bytes. Throws when /proc
    /// cannot say: an unreadable figure must fail a memory bound, not read as 0 bytes (under
    /// which every bound would pass).
    public static func bytes(_ field: String, of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else {
            throw ProcessError("no \(field) in /proc/\(pid)/status")
        }
        guard let kilobytes = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) }),
              kilobytes > 0
        else { throw ProcessError("\(field) of \(pid) is not a size: \(line)") }
        return kilobytes * 1_024
    }
}
