/// The JetStream durable consumer name of an EB1 consumer NAME.
///
/// EB1 names are `[a-z0-9_.-]{1,64}`; JetStream durable names may not hold `.`. `_`
/// becomes `__` and `.` becomes `_d`, so distinct NAMEs stay distinct: `reader.1` is
/// `reader_d1`, `reader_d1` is `reader__d1`.
public enum DurableName {
    public static func make(_ name: String) -> String {
        var result = ""
        for character in name {
            switch character {
            case "_": result += "__"
            case ".": result += "_d"
            default: result.append(character)
            }
        }
        return result
    }
}
