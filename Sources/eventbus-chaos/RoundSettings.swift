import Foundation

/// What every round of a campaign shares.
struct RoundSettings {
    /// Events of the workload per round (setup included).
    let events: Int
    let publishers: Int
    /// Where each round's directory goes (`chaos-<seed>`).
    let root: URL
    /// This executable, started again as `publish` for each publisher.
    let executable: String
    /// How long each fsync of the bus takes longer (a slow disk, through the shim below), if at all.
    var fsyncDelayMicroseconds: Int?

    /// The LD_PRELOAD shim of the failing-fsync fault, built beside this executable (the
    /// product `eventbus-chaos-fsync`).
    var fsyncShim: String {
        URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("libeventbus-chaos-fsync.so").path
    }
}
