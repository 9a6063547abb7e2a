/// A round could not be run as planned (a process that would not start, a bus that never
/// caught up): the campaign stops and keeps the round's directory.
struct ChaosRunError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}
