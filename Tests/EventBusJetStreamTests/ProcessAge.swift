import Foundation
import Glibc

/// How long a process has run, from Linux's /proc: its start in clock ticks since boot
/// (`/proc/PID/stat`'s 22nd field) against the time since boot (`/proc/uptime`).
enum ProcessAge {
    static func of(_ pid: Int32) -> Duration? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")"),
              let uptime = try? String(contentsOfFile: "/proc/uptime", encoding: .utf8),
              let since = uptime.split(separator: " ").first.flatMap({ Double($0) }) else { return nil }
        // The fields after the command's closing parenthesis start at the 3rd.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = Double(fields[19]) else { return nil }
        let age = since - ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
        return .milliseconds(Int64(max(0, age) * 1_000))
    }
}
