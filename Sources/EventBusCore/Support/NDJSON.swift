#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Newline-delimited JSON, as `eventbus publish` reads it: one event a line.
package enum NDJSON {
    /// The events of `input` (a line each, without its `\n` or `\r\n`; lines of only spaces
    /// and tabs skipped, as are empty ones) with the line number (1-based) of each.
    ///
    /// Works on the bytes with `memchr`: going through `Data`'s generic collection methods
    /// cost microseconds a line, most of `eventbus publish`'s time on a large file.
    package static func events(in input: [UInt8]) -> (events: [[UInt8]], lines: [Int]) {
        var events: [[UInt8]] = []
        var lines: [Int] = []
        input.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            var start = 0
            var number = 0
            while true {
                number += 1
                let rest = bytes.count - start
                let newline = rest > 0 ? memchr(base + start, 0x0A, rest) : nil
                var end = newline.map { UnsafeRawPointer($0) - base } ?? bytes.count
                let next = end + 1
                if end > start && bytes[end - 1] == 0x0D { end -= 1 }
                if !isBlank(bytes, start..<end) {
                    events.append(Array(UnsafeRawBufferPointer(rebasing: bytes[start..<end])))
                    lines.append(number)
                }
                guard newline != nil else { break }
                start = next
            }
        }
        return (events, lines)
    }

    private static func isBlank(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        for index in range where bytes[index] != 0x20 && bytes[index] != 0x09 { return false }
        return true
    }
}
