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
}
