extension JSONValue {
    /// The value as compact JSON text (no whitespace), numbers as their kept text.
    ///
    /// `JSONParser.parse(value.serialized()) == value` for every value.
    public func serialized() -> [UInt8] {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.bytes
    }

    /// Writes the value with `writer`, as the next value of its current container.
    public func write(to writer: inout JSONWriter) {
        switch self {
        case .null:
            writer.null()
        case .bool(let value):
            writer.bool(value)
        case .number(let text):
            writer.raw(text.utf8)
        case .string(let value):
            writer.string(value)
        case .array(let elements):
            writer.beginArray()
            for element in elements {
                element.write(to: &writer)
            }
            writer.endArray()
        case .object(let members):
            writer.beginObject()
            for member in members {
                writer.key(member.key)
                member.value.write(to: &writer)
            }
            writer.endObject()
        }
    }
}

extension JSONValue: CustomStringConvertible {
    /// The value as compact JSON text.
    public var description: String {
        String(decoding: serialized(), as: UTF8.self)
    }
}
