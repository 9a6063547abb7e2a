/// A plugin: logic that consumes one stage of the bus and publishes to the next.
///
/// The runtime (``PluginRunner``) does everything else: the durable consume,
/// batching, publishing with confirms, deterministic output ids, committing the
/// state with the last applied SEQ, acknowledging, reconnecting and shutting
/// down cleanly. A plugin sees every event of its input stage in log order and
/// decides, like a middleware, what goes on:
///
/// ```swift
/// struct DropTyping: Plugin {
///     let name = "drop-typing"
///     func handle(_ event: PluginEvent, state: inout NoState, output: inout PluginOutput) throws {
///         if event.type != "typing.start" { output.pass(event) }   // `pass` is `next`
///     }
/// }
/// ```
///
/// An event the plugin neither passes nor replaces is consumed: it stops here.
/// Pass on every event you do not consume (settings included), so that later
/// stages see the whole history.
public protocol Plugin: Sendable {
    /// The state the plugin keeps between events; ``NoState`` for none.
    associatedtype State: PluginState = NoState

    /// The plugin's name: its consumer name and, by default, its stage.
    var name: String { get }

    /// Services this plugin answers (`query` events whose subject is the service).
    var services: [String] { get }

    /// The state to start from when nothing was committed yet.
    func initialState() -> State

    /// Handles one event of the input stage, in log order.
    ///
    /// - Parameters:
    ///   - event: The event as logged, with its SEQ and topic.
    ///   - state: The plugin's state; changes are committed with the SEQ.
    ///   - output: Where to pass the event on or emit new events.
    /// - Throws: Any error stops the plugin (the supervisor restarts it and it
    ///   resumes before this event): a plugin fails closed, it never skips.
    func handle(_ event: PluginEvent, state: inout State, output: inout PluginOutput) throws
}

extension Plugin {
    public var services: [String] { [] }
}

extension Plugin where State == NoState {
    public func initialState() -> NoState { NoState() }
}
