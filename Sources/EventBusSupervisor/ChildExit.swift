/// How a child process ended, as the kernel reported it.
enum ChildExit: Sendable, Equatable, CustomStringConvertible {
    /// It called `exit` with this status.
    case exited(status: Int32)
    /// A signal with this number ended it.
    case killed(signal: Int32)

    var description: String {
        switch self {
        case .exited(let status): "exited with status \(status)"
        case .killed(let signal): "killed by signal \(signal)"
        }
    }
}
