/// The identifier and time rules of docs/events.md ("The envelope": Identifiers, Times).
///
/// Each check is a single pass over the UTF-8 bytes with no allocation.
public enum Identifier {
    /// The longest channel type name (and `TYPE` part of a `cid`).
    public static let maxTypeLength = 64
    /// The longest `ID` part of a `cid`, user id or message id.
    public static let maxIDLength = 128

    /// Whether `cid` is `TYPE:ID`, TYPE `[a-z0-9_-]{1,64}`, ID `[A-Za-z0-9_!.@-]{1,128}`.
    public static func isValidCID(_ cid: String) -> Bool {
        withBytes(cid) { bytes in isCID(bytes) }
    }

    /// Whether `userID` matches `[A-Za-z0-9_!.@-]{1,128}` and does not start with `@`.
    public static func isValidUserID(_ userID: String) -> Bool {
        withBytes(userID) { bytes in isUserID(bytes) }
    }

    /// Whether `messageID` matches `[A-Za-z0-9_!.@-]{1,128}`.
    public static func isValidMessageID(_ messageID: String) -> Bool {
        withBytes(messageID) { bytes in isID(bytes) }
    }

    /// Whether `name` is a channel type name, `[a-z0-9_-]{1,64}`.
    public static func isValidChannelTypeName(_ name: String) -> Bool {
        withBytes(name) { bytes in isTypeName(bytes) }
    }

    /// Whether `name` is a valid event type name, `[a-z][a-z0-9_.]{0,63}`.
    public static func isValidEventTypeName(_ name: String) -> Bool {
        withBytes(name, isEventTypeName)
    }

    /// `[a-z][a-z0-9_.]{0,63}`, on bytes.
    static func isEventTypeName(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 1, bytes.count <= 64 else { return false }
        guard bytes[0] >= UInt8(ascii: "a") && bytes[0] <= UInt8(ascii: "z") else { return false }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"), UInt8(ascii: "."):
                continue
            default:
                return false
            }
        }
        return true
    }

    /// Whether `time` is an RFC 3339 UTC time with exactly three fraction
    /// digits and `Z`, such as `2026-11-22T03:10:00.123Z`, naming a real
    /// instant: month 01–12, a day that exists in that month (leap years
    /// included), hour 00–23, minute and second 00–59 (no leap second).
    public static func isValidTimestamp(_ time: String) -> Bool {
        withBytes(time) { bytes in isTimestamp(bytes) }
    }

    // MARK: - Byte-level rules

    @inline(__always)
    static func withBytes<R>(_ string: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = string.utf8.withContiguousStorageIfAvailable(body) {
            return result
        }
        var copy = string
        return copy.withUTF8(body)
    }

    /// `TYPE:ID`, TYPE `[a-z0-9_-]{1,64}`, ID `[A-Za-z0-9_!.@-]{1,128}`: the rule of ``isValidCID(_:)``.
    static func isCID(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var colon = -1
        for index in 0..<bytes.count where bytes[index] == UInt8(ascii: ":") {
            colon = index
            break
        }
        guard colon > 0 else { return false }
        return isTypeName(UnsafeBufferPointer(rebasing: bytes[0..<colon]))
            && isID(UnsafeBufferPointer(rebasing: bytes[(colon + 1)...]))
    }

    /// `[A-Za-z0-9_!.@-]{1,128}`, not starting with `@`: the rule of ``isValidUserID(_:)``.
    static func isUserID(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        isID(bytes) && bytes[0] != UInt8(ascii: "@")
    }

    /// A strict RFC 3339 UTC time naming a real instant: the rule of ``isValidTimestamp(_:)``.
    static func isTimestamp(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // 0123456789012345678901234
        // 2026-11-22T03:10:00.123Z
        guard bytes.count == 24,
            bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "."),
            bytes[23] == UInt8(ascii: "Z")
        else { return false }
        func number(_ start: Int, _ length: Int) -> Int? {
            var value = 0
            for index in start..<start + length {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int(digit)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            number(20, 3) != nil
        else { return false }
        guard month >= 1, month <= 12, day >= 1, hour <= 23, minute <= 59, second <= 59 else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days: Int
        switch month {
        case 2: days = leap ? 29 : 28
        case 4, 6, 9, 11: days = 30
        default: days = 31
        }
        return day <= days
    }

    /// `[a-z0-9_-]{1,64}`.
    static func isTypeName(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 1, bytes.count <= maxTypeLength else { return false }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"), UInt8(ascii: "-"):
                continue
            default:
                return false
            }
        }
        return true
    }

    /// `[A-Za-z0-9_!.@-]{1,128}`.
    static func isID(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 1, bytes.count <= maxIDLength else { return false }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "!"),
                UInt8(ascii: "."), UInt8(ascii: "@"), UInt8(ascii: "-"):
                continue
            default:
                return false
            }
        }
        return true
    }
}
