/// Equality of short runs of bytes (a type name, a cid, a version), eight bytes at a time.
///
/// The standard library's `elementsEqual` walks two iterators a byte at a time, and against
/// a `String`'s UTF-8 view slower still; on the broker's path from frame to log such
/// compares were about 2 % of its thread.
package enum ByteRun {
    /// Whether `a` and `b` hold the same bytes.
    @inline(__always)
    package static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        var offset = 0
        while offset + 8 <= a.count {
            if a.loadUnaligned(fromByteOffset: offset, as: UInt64.self) != b.loadUnaligned(fromByteOffset: offset, as: UInt64.self) {
                return false
            }
            offset += 8
        }
        while offset < a.count {
            if a[offset] != b[offset] { return false }
            offset += 1
        }
        return true
    }

    /// Whether `a` and `b` hold the same bytes.
    @inline(__always)
    package static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        equal(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b))
    }

    /// Whether `a` holds the bytes of `b`.
    @inline(__always)
    package static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: [UInt8]) -> Bool {
        a.count == b.count && b.withUnsafeBytes { equal(UnsafeRawBufferPointer(a), $0) }
    }

    /// Whether `bytes` begins with `prefix`.
    @inline(__always)
    package static func starts(_ bytes: UnsafeBufferPointer<UInt8>, with prefix: [UInt8]) -> Bool {
        bytes.count >= prefix.count
            && equal(UnsafeBufferPointer(rebasing: bytes[..<prefix.count]), prefix)
    }

    /// Whether `bytes` holds `pattern` anywhere (``firstOffset(of:in:)``).
    package static func contains(_ bytes: UnsafeRawBufferPointer, _ pattern: UnsafeRawBufferPointer) -> Bool {
        firstOffset(of: pattern, in: bytes) != nil
    }

    /// Where `pattern` first lies in `bytes`; `nil` when nowhere (0 for an empty pattern). The
    /// candidates (places of the pattern's first byte) are found eight bytes at a time, and
    /// each is checked with one ``equal(_:_:)``: a `firstIndex(of:)` and a generic
    /// `elementsEqual` at every quote of a JSON text was 12 % of a privacy filter's thread.
    package static func firstOffset(of pattern: UnsafeRawBufferPointer, in bytes: UnsafeRawBufferPointer) -> Int? {
        guard !pattern.isEmpty else { return 0 }
        guard bytes.count >= pattern.count else { return nil }
        let first = pattern[0], last = bytes.count - pattern.count
        var start = 0
        while start <= last {
            if start + 8 <= bytes.count {
                // The lowest flag is exact (``WordBytes/matching(_:in:)``): a true match.
                let flags = WordBytes.matching(first, in: bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self).littleEndian)
                if flags == 0 {
                    start += 8
                    continue
                }
                start += flags.trailingZeroBitCount >> 3
                if start > last { return nil }
            } else if bytes[start] != first {
                start += 1
                continue
            }
            if equal(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + pattern.count)]), pattern) { return start }
            start += 1
        }
        return nil
    }
}
