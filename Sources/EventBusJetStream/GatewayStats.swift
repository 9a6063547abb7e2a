import EventBus

/// The STATS reply of a gateway, in the broker's shape where the cluster has the same
/// figure (docs/protocol.md "STATS"): events per stage, and per consumer attached here its
/// prefixes, the SEQ acked up to, the lag, what is in flight and the credit. The cluster's
/// figures come from JetStream (``GatewayCore`` asks off its loop); the rest is the loop's.
struct GatewayStats: Sendable, Equatable {
    /// One stage's stream as JetStream reported it; `nil` figures when it did not answer.
    struct Stage: Sendable, Equatable {
        var name: String
        var messages: UInt64?
        var lastSequence: UInt64?
    }

    /// One consumer attached to this gateway.
    struct Consumer: Sendable, Equatable {
        var name: String
        var stage: String
        var prefixes: [String]
        /// Every SEQ up to it is acked (JetStream's ack floor); `nil` when JetStream did not answer.
        var acked: UInt64?
        var inFlight: Int
        var credit: Int
        /// With keys, the client holding it (its ZAP name).
        var client: String?
    }

    var servers: [String]
    var connectedURL: String?
    var replicas: Int
    var eventsInFlight: Int
    var batchesSent: Int
    var pubsBatched: Int
    var pendingRequests: Int
    var stages: [Stage]
    var consumers: [Consumer]

    /// Events of the consumer's stage after its ack floor, when both are known.
    func lag(of consumer: Consumer) -> UInt64? {
        guard let acked = consumer.acked,
              let last = stages.first(where: { $0.name == consumer.stage })?.lastSequence else { return nil }
        return last - min(last, acked)
    }

    var json: [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("backend"); w.string("jetstream")
        w.key("servers"); w.beginArray(); for server in servers { w.string(server) }; w.endArray()
        w.key("connected_url"); w.string(orNull: connectedURL)
        w.key("replicas"); w.int(replicas)
        w.key("stages"); w.beginObject()
        for stage in stages {
            w.key(stage.name)
            w.uint(orNull: stage.messages)
        }
        w.endObject()
        // Each stage has its own sequence on JetStream: its last SEQ, not one head for all.
        w.key("head_seqs"); w.beginObject()
        for stage in stages {
            w.key(stage.name)
            w.uint(orNull: stage.lastSequence)
        }
        w.endObject()
        w.key("consumers"); w.beginArray()
        for consumer in consumers {
            w.beginObject()
            w.key("name"); w.string(consumer.name)
            w.key("stage"); w.string(consumer.stage)
            w.key("prefixes"); w.beginArray(); for prefix in consumer.prefixes { w.string(prefix) }; w.endArray()
            w.key("acked"); w.uint(orNull: consumer.acked)
            w.key("lag"); w.uint(orNull: lag(of: consumer))
            w.key("in_flight"); w.int(consumer.inFlight)
            w.key("credit"); w.int(consumer.credit)
            w.key("connected"); w.bool(true)
            // With keys, who holds it, as the broker says: the supervisor's readiness counts a
            // plugin's stage only when the plugin itself holds it.
            if let client = consumer.client { w.key("client"); w.string(client) }
            w.endObject()
        }
        w.endArray()
        w.key("events_in_flight"); w.int(eventsInFlight)
        // Atomic batches sent to JetStream and the PUBs they carried (several a batch when
        // a connection pipelines: OrderedPublisher's flights).
        w.key("batches_sent"); w.int(batchesSent)
        w.key("pubs_batched"); w.int(pubsBatched)
        w.key("pending_requests"); w.int(pendingRequests)
        w.endObject()
        return w.bytes
    }
}
