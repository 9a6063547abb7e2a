/// The version of the broker, reported by `HELLO` and `STATS`.
public enum BrokerVersion {
    public static let string = "0.1.0"
}
