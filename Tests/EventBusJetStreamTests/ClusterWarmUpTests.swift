import CNATS
import NATS
import Synchronization
import Testing

@testable import EventBusJetStream

/// What a cluster that just started refuses is retried for a while; nothing else is.
@Suite struct ClusterWarmUpTests {
    static let noResponders = NATSError(status: NATS_NO_RESPONDERS.rawValue, operation: "get EVENTBUS_STATE/x.manifest",
                                        text: "No responders available for request")
    static let noPeers = NATSError(status: NATS_ERR.rawValue, jetStreamCode: Int(JSClusterNoPeersErr.rawValue),
                                   operation: "add stream", text: "no suitable peers for placement")
    static let timeout = NATSError(status: NATS_TIMEOUT.rawValue, operation: "get", text: "Timeout")

    @Test func noRespondersAndNoPeersAreRetriedUntilTheyPass() throws {
        let tries = Mutex(0)
        let value = try ClusterWarmUp.retry("test", wait: .seconds(30)) { () throws(NATSError) -> Int in
            let n = tries.withLock { $0 += 1; return $0 }
            if n == 1 { throw Self.noResponders }
            if n == 2 { throw Self.noPeers }
            return 7
        }
        #expect(value == 7)
        #expect(tries.withLock { $0 } == 3)
    }

    /// Asked about a consumer while its stream elects a leader (seen in FailoverTests right
    /// after a SIGKILL of the leader): "JetStream system temporarily unavailable".
    @Test func temporarilyUnavailableIsRetriedUntilItPasses() throws {
        let unavailable = NATSError(status: NATS_ERR.rawValue, jetStreamCode: Int(JSClusterNotAvailErr.rawValue),
                                    operation: "consumer info EVENTBUS_in/during-election",
                                    text: "JetStream system temporarily unavailable")
        #expect(unavailable.isTemporarilyUnavailable)
        #expect(ClusterWarmUp.isTransient(unavailable))
        let tries = Mutex(0)
        let value = try ClusterWarmUp.retry("test", wait: .seconds(30)) { () throws(NATSError) -> Int in
            let n = tries.withLock { $0 += 1; return $0 }
            if n <= 2 { throw unavailable }
            return 7
        }
        #expect(value == 7)
        #expect(tries.withLock { $0 } == 3)
    }

    @Test func otherErrorsAreThrownAtOnce() {
        let tries = Mutex(0)
        #expect(throws: Self.timeout) {
            try ClusterWarmUp.retry("test", wait: .seconds(30)) { () throws(NATSError) -> Int in
                tries.withLock { $0 += 1 }
                throw Self.timeout
            }
        }
        #expect(tries.withLock { $0 } == 1)
    }

    /// A stream's creation that got no answer in time (its first election outlasted the
    /// request) is asked again when the caller says the request is safe to repeat.
    @Test func timeoutsAreRetriedOnlyWhenAskedFor() throws {
        let tries = Mutex(0)
        let value = try ClusterWarmUp.retry("test", wait: .seconds(30), timeouts: true) { () throws(NATSError) -> Int in
            let n = tries.withLock { $0 += 1; return $0 }
            if n == 1 { throw Self.timeout }
            return 7
        }
        #expect(value == 7)
        #expect(tries.withLock { $0 } == 2)
        #expect(!ClusterWarmUp.isTransient(Self.timeout))
        #expect(ClusterWarmUp.isTransient(Self.timeout, timeouts: true))
    }

    /// A stream just made may be "not found" by a replica for a moment (the partition
    /// tests' gateways starting together): retried only where the caller knows it exists.
    @Test func aStreamNotFoundIsRetriedOnlyWhenAskedFor() throws {
        let notFound = NATSError(status: NATS_ERR.rawValue, jetStreamCode: Int(JSStreamNotFoundErr.rawValue),
                                 operation: "stream info EVENTBUS_in", text: "stream not found")
        #expect(!ClusterWarmUp.isTransient(notFound, timeouts: true))
        #expect(ClusterWarmUp.isTransient(notFound, notFound: true))
        let tries = Mutex(0)
        let value = try ClusterWarmUp.retry("test", wait: .seconds(30), notFound: true) { () throws(NATSError) -> Int in
            let n = tries.withLock { $0 += 1; return $0 }
            if n == 1 { throw notFound }
            return 7
        }
        #expect(value == 7)
        #expect(tries.withLock { $0 } == 2)
    }

    @Test func aClusterThatNeverWarmsUpIsReportedAfterTheWait() {
        #expect(throws: Self.noResponders) {
            try ClusterWarmUp.retry("test", wait: .zero) { () throws(NATSError) -> Int in throw Self.noResponders }
        }
    }
}
