/// Everything a round leaves for the checker: the log as it is on disk, what the publishers
/// saw confirmed, what the observer of `out` did, and the queries asked at the end.
public struct ChaosHistory: Sendable {
    /// The plugins of the round's pipeline, in order.
    public var pipeline: [String]
    /// Every record of the log, in file order.
    public var records: [LoggedRecord]
    public var confirmed: [ConfirmedEvent]
    /// The (source, id) of every event the round published: each must have been confirmed
    /// (the publishers finish only then), or the confirmed rules would check too little.
    public var published: [EventIdentity]
    public var observer: ObserverLog
    public var queries: [QueryProbe]

    public init(pipeline: [String], records: [LoggedRecord], confirmed: [ConfirmedEvent], published: [EventIdentity],
                observer: ObserverLog, queries: [QueryProbe]) {
        self.pipeline = pipeline
        self.records = records
        self.confirmed = confirmed
        self.published = published
        self.observer = observer
        self.queries = queries
    }
}
