// A stateful plugin: counts the events it sees by type, passes every event on,
// emits a `counter.milestone` event to `diag` every 1,000 events of a type (`--milestone N`), and
// answers the `counter` service: `eventbus query --service counter count '{"type":"message.read"}'`.
//
// Its state is committed with the SEQ of the last event applied, so after a
// crash it resumes exactly where it was and republishes nothing twice.
import EventBus
import EventBusPlugin

struct Counts: PluginState {
    var byType: [String: Int] = [:]

    init() {}

    init(snapshot: [UInt8]) throws {
        guard case .object(let members) = try JSONParser.parse(snapshot) else {
            throw PluginError("counter snapshot: not a JSON object")
        }
        for (type, count) in members { byType[type] = Int(count.int64Value ?? 0) }
    }

    func snapshot() -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        for (type, count) in byType.sorted(by: { $0.key < $1.key }) { w.key(type); w.int(count) }
        w.endObject()
        return w.bytes
    }
}

struct Counter: Plugin {
    let name = "counter"
    var services: [String] { ["counter"] }
    /// A `counter.milestone` every this many events of a type.
    var milestone = 1_000

    func initialState() -> Counts { Counts() }

    func handle(_ event: PluginEvent, state: inout Counts, output: inout PluginOutput) throws {
        if let query = QueryEvent(event), query.service == "counter" {
            guard query.method == "count", let type = query.params["type"]?.stringValue else {
                output.reply(to: query, errorCode: .badRequest, message: "method must be count with params.type a string")
                return
            }
            var w = JSONWriter()
            w.beginObject()
            w.key("type"); w.string(type)
            w.key("count"); w.int(state.byType[type] ?? 0)
            w.endObject()
            output.reply(to: query, result: w.bytes)
            return
        }
        let type = String(event.type)
        let count = (state.byType[type] ?? 0) + 1
        state.byType[type] = count
        output.pass(event)
        if count % milestone == 0 {
            var w = JSONWriter()
            w.beginObject()
            w.key("type"); w.string(type)
            w.key("count"); w.int(count)
            w.endObject()
            output.emit(type: "counter.milestone", subject: String(event.subject), data: w.bytes, time: nil, to: .diag)
        }
    }
}

/// The options every plugin takes, and the counter's own.
struct CounterOptions: PluginArguments {
    @OptionGroup var plugin: PluginOptions

    @Option(help: ArgumentHelp("Emit a counter.milestone to diag every N events of a type.", valueName: "N"))
    var milestone: Int = 1_000

    func validate() throws {
        guard milestone >= 1 else { throw ValidationError("--milestone must be at least 1") }
    }
}

await PluginMain.run(CounterOptions.self) { options in
    Counter(milestone: options.milestone)
}
