/// Stage names: the reserved ones and the rule for the ones plugins get.
///
/// A stage is the first segment of an event's topic (docs/protocol.md, "Topics
/// and stages"). `in`, `out` and `diag` are fixed; every plugin's output stage is
/// named after the plugin (or after NAME in `external:NAME`).
public enum Stage {
    /// The stage backends publish to.
    public static let `in` = "in"
    /// The stage the outside world reads.
    public static let out = "out"
    /// The stage of diagnostics (`receipt.rejected`, suppression audit records).
    public static let diag = "diag"
    /// The reserved stage names.
    public static let reserved: [String] = [Stage.in, Stage.out, Stage.diag]

    /// Whether `name` is one of the reserved stage names.
    public static func isReserved(_ name: String) -> Bool {
        name == Stage.in || name == Stage.out || name == Stage.diag
    }

    /// Whether `name` can name a plugin's stage (and so an `external:NAME`
    /// entry): `[a-z0-9_-]{1,64}` and not a reserved name.
    public static func isValidName(_ name: String) -> Bool {
        !isReserved(name) && Identifier.isValidChannelTypeName(name)
    }
}
