import EventBusCore
import ReceiptReducer
import Testing

/// Runs the worked example of `docs/privacy.md` ("What others see, step by
/// step") against the reducer, as ``EventsDocTests`` runs `docs/events.md`'s:
/// each step's outputs and each query reply must be what the page shows. The
/// replies are the reducer's full ones, before any filter: docs/events.md
/// rules 6, 18 and 19 hold in them already.
@Suite struct PrivacyDocTests {
    @Test func workedPrivacyExampleMatchesTheReducer() throws {
        let doc = try EventsDoc.load("privacy.md")
        let example = try WorkedExample(doc)
        try #require(example.steps.count >= 8, "the privacy example has too few steps")
        try #require(example.queries.count >= 3, "the privacy example has too few queries")
        var reducer = ReceiptReducer()
        for step in example.steps {
            let produced = try step.apply(to: &reducer)
            let expected = produced.enumerated().map { n, output in
                EventsDoc.envelope(of: output, seq: step.number, n: n, time: step.time)
            }
            if step.documentedOutputs != .array(expected) {
                Issue.record(
                    """
                    docs/privacy.md line \(step.outputLine): step \(step.number)'s outputs differ from the reducer's. \
                    It emits:
                    ```json step=\(step.number) output
                    \(EventsDoc.render(expected))
                    ```
                    """)
            }
            try example.runQueries(after: step.number, on: reducer)
        }
    }

    @Test func everyPrivacyExampleInputValidates() throws {
        for block in try EventsDoc.load("privacy.md").blocks where block.words.contains("input") {
            #expect(throws: Never.self, "docs/privacy.md line \(block.line)") {
                try EventValidator.validate(Array(block.text.utf8), stage: Stage.in)
            }
        }
    }
}
