import EventBus
import EventBusPlugin
import ReceiptReducer

/// The reducer's state as the plugin runtime commits it.
struct ReducerState: PluginState {
    var reducer: ReceiptReducer

    init(reducer: ReceiptReducer = ReceiptReducer()) { self.reducer = reducer }

    init(snapshot: [UInt8]) throws { reducer = try ReceiptReducer(snapshot: snapshot) }

    func snapshot() -> [UInt8] { reducer.encodeSnapshot() }
}

/// The `receipt-reducer` plugin: folds the ingress stage into watermarks and
/// counts, emits the egress events (docs/events.md "Egress events") and answers the
/// `receipts` service. A `channel_state` or `message_receipts` reply carries
/// the full result and the redacted views for its viewer (``QueryAnswer``);
/// the broker returns only the result, so without filters nothing is hidden.
///
/// It consumes the receipt events (`message.*`, `notification.*`) and replaces
/// them with what the fold emits; it passes every other event on unchanged —
/// membership and settings included, so the privacy filters after it see them
/// in log order.
struct ReceiptReducerPlugin: Plugin {
    let name = "receipt-reducer"
    var services: [String] { ["receipts"] }
    /// ``ReceiptReducer/pushCountsUpTo``: configuration, not state, so it is set on
    /// whatever state the runtime hands over (a fresh one or a snapshot's).
    var pushCountsUpTo = 0
    /// ``ReceiptReducer/retainMessages``, configuration as well.
    var retainMessages = ReceiptReducer.defaultRetention

    func initialState() -> ReducerState { ReducerState() }

    func handle(_ event: PluginEvent, state: inout ReducerState, output: inout PluginOutput) throws {
        if state.reducer.pushCountsUpTo != pushCountsUpTo { state.reducer.pushCountsUpTo = pushCountsUpTo }
        if state.reducer.retainMessages != retainMessages { state.reducer.retainMessages = retainMessages }
        // The type read from the topic once: each read makes a string.
        let type = event.type
        if type == EventType.query.rawValue, let query = QueryEvent(event) {
            guard query.service == "receipts" else {
                output.pass(event)  // another plugin's service
                return
            }
            do {
                // The full result plus the redacted views the privacy filters pick from.
                output.reply(to: query, data: try state.reducer.answer(method: query.method, params: query.params).data)
            } catch {
                output.reply(to: query, errorCode: ErrorCode(rawValue: error.code) ?? .badRequest, message: error.message)
            }
            return
        }
        // Acks and membership by scans; `message.new` and `message.deleted` with their `data`,
        // which the reducer re-emits unchanged. The payload goes straight into the input:
        // a tuple in between copied it (a retain and a release of each of its strings).
        let input: ReducerInput
        let inputType: EventType
        if type == EventType.messageNew.rawValue || type == EventType.messageDeleted.rawValue {
            guard let (envelope, payload) = try event.ingress() else {
                output.pass(event)
                return
            }
            inputType = payload.type
            input = ReducerInput(seq: event.seq, time: envelope.time, payload: payload, data: envelope.data)
        } else {
            guard let (type, time, payload) = try event.ingressPayload(type: type) else {
                output.pass(event)
                return
            }
            inputType = type
            input = ReducerInput(seq: event.seq, time: time, payload: payload)
        }
        if inputType.isPrivate {
            // Membership and settings go on, in log order, for the stages after this one.
            output.pass(event)
        }
        #if EVENTBUS_MUTANTS
        if Mutant.active == .reducerSkipsWatermark, inputType == .messageRead, event.seq % 16 == 0 { return }
        #endif
        let outputs = state.reducer.apply(input)
        for produced in outputs {
            output.emit(type: produced.type, subject: produced.subject, data: produced.data, time: input.time,
                        to: produced.stage == Stage.diag ? .diag : .next)
        }
    }
}
