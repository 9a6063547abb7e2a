import EventBusCore
import ReceiptReducer
import Testing

/// docs/events.md's worked group chat held against ``ReferenceModel``, the naive model
/// of the rules written apart from the reducer: the page's outputs and query replies must
/// be what the rules give, not only what the code printed for them.
@Suite struct EventsDocModelTests {
    @Test func workedGroupChatExampleMatchesTheReferenceModel() throws {
        let doc = try EventsDoc.load()
        let example = try WorkedExample(doc)
        try #require(example.steps.count >= 10, "the worked example has too few steps")
        var model = ReferenceModel()
        var cursor: JSONValue?
        Self.checkQueries(example, after: 0, model, cursor: &cursor)
        for step in example.steps {
            let payload = try #require(step.event.payload)
            let produced = model.apply(ReducerInput(seq: UInt64(step.number), time: step.time, payload: payload,
                                                    data: step.event.envelope.data))
            let expected = produced.enumerated().map { n, output in
                EventsDoc.envelope(of: output, seq: step.number, n: n, time: step.time)
            }
            #expect(step.documentedOutputs == .array(expected),
                    "docs/events.md line \(step.outputLine): step \(step.number)'s outputs differ from the model's: \(EventsDoc.render(expected))")
            Self.checkQueries(example, after: step.number, model, cursor: &cursor)
        }
    }

    /// Asks the model the page's queries after `step`. Cursors are opaque and each side has
    /// its own: a documented next page is asked with the model's `next_cursor` of the page before.
    static func checkQueries(_ example: WorkedExample, after step: Int, _ model: ReferenceModel, cursor: inout JSONValue?) {
        for query in example.queries where query.after == step {
            var params = query.params
            if case .object(let members) = params, members.contains(where: { $0.key == "cursor" }) {
                guard let own = cursor else {
                    Issue.record("docs/events.md line \(query.line): a next page, but the model gave no cursor before it")
                    continue
                }
                params = .object(members.map { $0.key == "cursor" ? (key: $0.key, value: own) : $0 })
            }
            switch model.query(method: query.method, params: params) {
            case .success(let reply):
                cursor = reply["next_cursor"]
                let want = GeneratedSequenceTests.opaqueCursor(reply), documented = GeneratedSequenceTests.opaqueCursor(query.reply)
                #expect(documented == want,
                        "docs/events.md line \(query.line): the \(query.method) reply after step \(step) differs from the model's: \(reply)")
            case .failure(let failure):
                Issue.record("docs/events.md line \(query.line): the model refuses the \(query.method) query after step \(step): \(failure.code)")
            }
        }
    }
}
