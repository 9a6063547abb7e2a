/// Writing and reading a SEQ in ASCII decimal, as every SEQ on the command socket travels, without making a string.
package enum ASCIIDecimal {
    /// The number of digits of `value` (1 for 0).
    package static func digits(_ value: UInt64) -> Int {
        var count = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            count += 1
        }
        return count
    }

    /// Writes `value` at `destination`, which has room for ``digits(_:)`` bytes; returns the bytes written.
    @discardableResult
    package static func write(_ value: UInt64, to destination: UnsafeMutableRawPointer) -> Int {
        let count = digits(value)
        var rest = value
        for index in stride(from: count - 1, through: 0, by: -1) {
            destination.storeBytes(of: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10), toByteOffset: index, as: UInt8.self)
            rest /= 10
        }
        return count
    }

    /// The value of `bytes` when they are 1 to 20 ASCII digits that fit a `UInt64`, else `nil`.
    package static func parse(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
        guard (1...20).contains(bytes.count) else { return nil }
        var value: UInt64 = 0
        for byte in bytes {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }

    /// 1 to 20 ASCII digits then `ending`, at `offset` in `bytes`: their value, with `offset`
    /// moved past `ending`; `nil` (and `offset` unmoved) for anything else. How a batch frame's
    /// headers are read (``DeliveryBatch``, ``PublishBatch``).
    static func read(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int, ending: UInt8) -> UInt64? {
        let start = offset
        // A SEQ or a length has at most 20 digits: look no further for the ending.
        let limit = min(bytes.count, start + 21)
        var end = start
        while end < limit, bytes[end] != ending { end += 1 }
        guard end < limit, let value = parse(UnsafeRawBufferPointer(rebasing: bytes[start..<end])) else { return nil }
        offset = end + 1
        return value
    }

    /// The value of `bytes` (a frame, or a slice of one); see the raw-buffer overload.
    package static func parse(_ bytes: ArraySlice<UInt8>) -> UInt64? {
        bytes.withUnsafeBytes { parse($0) }
    }
}
