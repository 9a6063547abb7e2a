import CNATS
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Duration {
    /// The duration in whole milliseconds, as libnats takes most timeouts.
    var natsMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }

    /// The duration in whole nanoseconds, as JetStream configurations take them.
    var natsNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// A duration from JetStream's nanoseconds.
    static func natsNanoseconds(_ value: Int64) -> Duration { .nanoseconds(value) }
}

/// C strings that live as long as this value: for the `const char **` arrays and
/// `const char *` fields of libnats's configuration structs, which are read during
/// the call only.
final class CStrings {
    private(set) var pointers: [UnsafePointer<CChar>?] = []

    init(_ strings: [String] = []) {
        for string in strings { _ = add(string) }
    }

    /// Copies `string` and returns the copy, valid until this value is gone.
    func add(_ string: String) -> UnsafePointer<CChar>? {
        let copy = UnsafePointer(strdup(string))
        pointers.append(copy)
        return copy
    }

    /// Copies `string` when there is one.
    func add(_ string: String?) -> UnsafePointer<CChar>? {
        string.map { add($0) } ?? nil
    }

    deinit {
        for pointer in pointers { free(UnsafeMutablePointer(mutating: pointer)) }
    }
}

/// A Swift string from a C string that may be absent.
func string(_ pointer: UnsafePointer<CChar>?) -> String? {
    pointer.map { String(cString: $0) }
}
