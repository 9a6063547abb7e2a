// The smallest plugin: passes every event of its input stage on, unchanged.
// `eventbus up --pipeline identity` runs it as a stage; so do the tests and
// `make bench` (events/s through N identity stages).
import EventBusPlugin

struct Identity: Plugin {
    let name = "identity"

    func handle(_ event: PluginEvent, state: inout NoState, output: inout PluginOutput) throws {
        output.pass(event)
    }
}

await PluginMain.run(Identity())
