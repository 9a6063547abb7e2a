import EventBus
import Testing

@testable import EventBusSupervisor

/// What the supervisor's STATS probe counts as a stage ready (its socket and timing go
/// through the client's state machine, tested in EventBusTests).
@Suite struct ReadinessProbeTests {
    let stats = Array(#"""
        {"consumers":[
          {"name":"receipt-reducer","connected":true,"client":"plugin:receipt-reducer"},
          {"name":"read-privacy","connected":true,"client":"someone-else"},
          {"name":"pyfilter","connected":true},
          {"name":"delivery-privacy","connected":false,"client":"plugin:delivery-privacy"}]}
        """#.utf8)

    @Test func connectedConsumersCountAndWithKeysOnlyASupervisedStagesOwnPlugin() {
        let supervised: Set = ["receipt-reducer", "read-privacy", "delivery-privacy"]
        #expect(ReadinessWatch.connectedConsumers(stats: stats, supervised: supervised, keyed: false)
            == ["receipt-reducer", "read-privacy", "pyfilter"])
        #expect(ReadinessWatch.connectedConsumers(stats: stats, supervised: supervised, keyed: true)
            == ["receipt-reducer", "pyfilter"])
        #expect(ReadinessWatch.connectedConsumers(stats: Array("not json".utf8), supervised: supervised, keyed: false).isEmpty)
    }
}
