/// Writing and reading a SEQ in ASCII decimal, as every SEQ on the command socket travels, without making a string.
package enum ASCIIDecimal {
    /// The number of digits of `value` (1 for 0): compared with powers of ten, no division.
    package static func digits(_ value: UInt64) -> Int {
        var count = 1
        var power: UInt64 = 10
        while count < 20 && value >= power {
            count += 1
            power &*= 10
        }
        return count
    }

    /// "00" to "99", two bytes each: two digits are written at once.
    private static let pairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """

    /// Writes `value` at `destination`, which has room for ``digits(_:)`` bytes; returns the bytes written.
    ///
    /// Two digits at a time, from a table: the broker writes three decimals per record it
    /// delivers in a batch and one per SEQ it confirms, and a digit at a time cost about
    /// 90 instructions for a 7-digit SEQ.
    @discardableResult
    package static func write(_ value: UInt64, to destination: UnsafeMutableRawPointer) -> Int {
        let count = digits(value)
        let table = UnsafeRawPointer(pairs.utf8Start)
        var rest = value
        var end = count
        while rest >= 100 {
            let pair = Int(truncatingIfNeeded: rest % 100)
            rest /= 100
            end -= 2
            destination.storeBytes(of: table.loadUnaligned(fromByteOffset: 2 * pair, as: UInt16.self), toByteOffset: end, as: UInt16.self)
        }
        if rest >= 10 {
            destination.storeBytes(of: table.loadUnaligned(fromByteOffset: 2 * Int(rest), as: UInt16.self), toByteOffset: 0, as: UInt16.self)
        } else {
            destination.storeBytes(of: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest), toByteOffset: 0, as: UInt8.self)
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
