import EventBusCore
import PrivacyFilter
import ReceiptReducer

/// What the pipeline must have made of the `in` stage, computed in-process with no broker,
/// no plugin runner and no socket: the reducer library (``ReceiptReducer``, a pure fold) for
/// the first stage, the privacy filters' own type (``PrivacyFilter``) for the others, fed the
/// logged `in` events in SEQ order.
///
/// The first stage restates what the `receipt-reducer` executable does around the fold: it
/// passes membership and settings on, replaces each receipt event by the fold's outputs with
/// the ids `receipt-reducer:<seq>:<n>`, and answers `receipts` queries. Every event it emits is
/// built by ``PluginOutput`` exactly as the runner builds it, so what reaches `out` can be
/// compared byte for byte.
public struct PipelineModel: Sendable {
    /// The plugins, in order: `receipt-reducer`, then any of `read-privacy`, `delivery-privacy`.
    public let pipeline: [String]
    private var reducer = ReceiptReducer()
    private var filters: [(filter: PrivacyFilter, settings: PrivacySettings)]
    private var filterSeq: UInt64 = 0
    /// Every event the last stage published to `out` (replies left out), in order.
    public private(set) var out: [[UInt8]] = []
    /// The `result` (or `error`) each `query` of `in` got, by its SEQ in `in`.
    public private(set) var answers: [UInt64: JSONValue] = [:]

    /// A model of `pipeline`.
    ///
    /// - Throws: ``ChaosError/unsupportedPipeline(_:)`` for a pipeline the model cannot run.
    public init(pipeline: [String]) throws(ChaosError) {
        guard pipeline.first == "receipt-reducer" else { throw .unsupportedPipeline(pipeline) }
        self.pipeline = pipeline
        filters = []
        for name in pipeline.dropFirst() {
            guard let policy = PrivacyPolicy.allCases.first(where: { $0.name == name }) else { throw .unsupportedPipeline(pipeline) }
            filters.append((PrivacyFilter(policy: policy), PrivacySettings()))
        }
    }

    /// Folds one event of `in` (they must come in SEQ order).
    public mutating func apply(_ record: LoggedRecord) throws {
        let event = PluginEvent(seq: record.seq, topic: record.topic, bytes: record.event)
        var output = PluginOutput(plugin: "receipt-reducer")
        output.begin(record.seq)
        if let query = QueryEvent(event) {
            if query.service == "receipts" {
                do {
                    output.reply(to: query, data: try reducer.answer(method: query.method, params: query.params).data)
                } catch {
                    output.reply(to: query, errorCode: ErrorCode(rawValue: error.code) ?? .badRequest, message: error.message)
                }
            } else {
                output.pass(event)
            }
        } else {
            try reduce(event, into: &output)
        }
        try filter(output.forward, query: record.seq)
    }

    /// The `receipt-reducer` plugin's handling of an event that is not a query.
    private mutating func reduce(_ event: PluginEvent, into output: inout PluginOutput) throws {
        let input: (type: EventType, time: String?, payload: IngressPayload, data: JSONValue?)
        if event.type == EventType.messageNew.rawValue || event.type == EventType.messageDeleted.rawValue {
            guard let (envelope, payload) = try event.ingress() else { return output.pass(event) }
            input = (payload.type, envelope.time, payload, envelope.data)
        } else {
            guard let (type, time, payload) = try event.ingressPayload() else { return output.pass(event) }
            input = (type, time, payload, nil)
        }
        if input.type.isPrivate { output.pass(event) }
        for produced in reducer.apply(ReducerInput(seq: event.seq, time: input.time, payload: input.payload, data: input.data)) {
            output.emit(type: produced.type, subject: produced.subject, data: produced.data, time: input.time,
                        to: produced.stage == Stage.diag ? .diag : .next)
        }
    }

    /// Sends the first stage's events through the filters, in order, to `out`.
    private mutating func filter(_ events: [[UInt8]], query seq: UInt64) throws {
        var stage = try events.map { (topic: try Self.topic(of: $0, stage: "receipt-reducer"), bytes: $0) }
        for index in filters.indices {
            var next: [(topic: String, bytes: [UInt8])] = []
            for event in stage {
                filterSeq += 1
                var output = PluginOutput(plugin: filters[index].filter.name)
                output.begin(filterSeq)
                try filters[index].filter.handle(PluginEvent(seq: filterSeq, topic: event.topic, bytes: event.bytes),
                                                 state: &filters[index].settings, output: &output)
                for bytes in output.forward {
                    next.append((try Self.topic(of: bytes, stage: filters[index].filter.name), bytes))
                }
            }
            stage = next
        }
        for event in stage {
            if event.topic.hasSuffix("/reply") {
                let data = try EventValidator.validate(event.bytes, stage: "plugin").envelope.data
                answers[seq] = data?["result"] ?? data?["error"] ?? .null
            } else {
                out.append(event.bytes)
            }
        }
    }

    private static func topic(of bytes: [UInt8], stage: String) throws -> String {
        let envelope = try EventValidator.validate(bytes, stage: "plugin").envelope
        return "\(stage)/\(envelope.subject)/\(envelope.type)"
    }
}
