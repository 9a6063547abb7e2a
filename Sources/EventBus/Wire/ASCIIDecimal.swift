/// Writing a SEQ in ASCII decimal, as every SEQ on the command socket travels, without making a string.
public enum ASCIIDecimal {
    /// The number of digits of `value` (1 for 0).
    public static func digits(_ value: UInt64) -> Int {
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
    public static func write(_ value: UInt64, to destination: UnsafeMutableRawPointer) -> Int {
        let count = digits(value)
        var rest = value
        for index in stride(from: count - 1, through: 0, by: -1) {
            destination.storeBytes(of: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10), toByteOffset: index, as: UInt8.self)
            rest /= 10
        }
        return count
    }
}
