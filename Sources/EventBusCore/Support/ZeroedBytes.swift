/// Byte arrays of a given count, made by copying zeros rather than by the standard library's
/// array initializers.
///
/// `[UInt8](repeating:count:)` and `[UInt8](unsafeUninitializedCapacity:initializingWith:)`
/// reach the standard library's unspecialized buffer initializer, which looks up the metadata of
/// `_ContiguousArrayStorage<UInt8>` on every call: about 420 instructions more than the
/// allocation itself (callgrind). An array copied from a buffer pointer allocates in specialized
/// code. The reducer makes four arrays per ack this way (two event bodies, two envelopes).
package enum ZeroedBytes {
    /// The zeros copied: arrays up to this count are copies of them; longer ones (where the
    /// copy would cost more than the lookup) come from the standard library's initializer.
    package static let pageSize = 4_096

    nonisolated(unsafe) private static let page: UnsafeBufferPointer<UInt8> = {
        let page = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: pageSize)
        page.initialize(repeating: 0)
        return UnsafeBufferPointer(page)
    }()

    /// `count` zero bytes.
    @inline(__always)
    package static func array(count: Int) -> [UInt8] {
        guard count <= pageSize else { return [UInt8](repeating: 0, count: count) }
        return Array(UnsafeBufferPointer(rebasing: page[..<Swift.max(count, 0)]))
    }

    /// `count` bytes that `body` writes, all of them (they start as zeros).
    @inline(__always)
    package static func array(count: Int, writing body: (UnsafeMutableBufferPointer<UInt8>) -> Void) -> [UInt8] {
        var bytes = array(count: count)
        bytes.withUnsafeMutableBufferPointer { body($0) }
        return bytes
    }
}
