/// A JSON value as parsed by ``JSONParser``.
///
/// Numbers keep their source text, so that a value round-trips byte for byte
/// and no precision is lost; ``int64Value`` and ``doubleValue`` convert on
/// demand. Objects keep their members in source order.
///
/// Equality is structural: two numbers are equal when their texts are equal
/// (`1.0` and `1` differ), two objects when they have the same members in the
/// same order.
public enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as its JSON text (for example `-12.5e3`).
    case number(String)
    /// A string, unescaped.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, with its members in source order. Keys are unique.
    case object([(key: String, value: JSONValue)])

    /// The value of the member named `key`, if this is an object that has one.
    ///
    /// A linear scan: event objects are small.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        for member in members where member.key == key {
            return member.value
        }
        return nil
    }

    /// The number as a 64-bit integer, if this is a number written as an
    /// integer (no fraction, no exponent) that fits.
    public var int64Value: Int64? {
        guard case .number(let text) = self else { return nil }
        return Int64(text)
    }

    /// The number as a `Double`, if this is a number.
    public var doubleValue: Double? {
        guard case .number(let text) = self else { return nil }
        return Double(text)
    }

    /// The string, if this is a string.
    public var stringValue: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }

    /// The boolean, if this is `true` or `false`.
    public var boolValue: Bool? {
        guard case .bool(let value) = self else { return nil }
        return value
    }

    /// Structural equality; see the type's discussion.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null):
            return true
        case (.bool(let a), .bool(let b)):
            return a == b
        case (.number(let a), .number(let b)):
            return a == b
        case (.string(let a), .string(let b)):
            return a == b
        case (.array(let a), .array(let b)):
            return a == b
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            for (x, y) in zip(a, b) where x.key != y.key || x.value != y.value {
                return false
            }
            return true
        default:
            return false
        }
    }
}
