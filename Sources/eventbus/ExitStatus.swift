#if canImport(Glibc)
import Glibc
#endif
import EventBus
import EventBusBroker
import EventBusMetrics
import EventBusSupervisor
import ZeroMQ

/// The status `eventbus` exits with when it cannot start or must stop, chosen
/// by the error's code (never by its text), so that a service manager can tell
/// a setting to fix from a failure a restart may cure (docs/operations.md,
/// "Exit statuses"). The numbers are the BSD `sysexits.h` ones.
enum ExitStatus {
    /// A failure at run time (an fsync or a write failed, a peer vanished): a restart may help.
    static let failure: Int32 = 1
    /// The log lost records that consumers had seen: run `eventbus recover` first (`EX_DATAERR`).
    static let recordsLost: Int32 = 65
    /// Something else holds what is needed now (the data directory's lock, the port): retry later (`EX_TEMPFAIL`).
    static let temporary: Int32 = 75
    /// A setting, file or key is wrong or refused: a restart does not help until it changes (`EX_CONFIG`).
    static let configuration: Int32 = 78

    static func of(_ error: any Error) -> Int32 {
        switch error {
        case let error as BrokerError:
            switch error.code {
            case .refusedSetting, .dataDirectory: configuration
            case .alreadyRunning, .fsyncFailed: failure
            case .endpointInUse: temporary
            }
        case let error as LogError:
            if error.kind == .locked { temporary } else if error.kind == .recordsLost { recordsLost } else { failure }
        case is PipelineError, is SecurityConfigError, is CurveKeyFileError, is CurveClientKeysError:
            configuration
        case let error as MetricsServerError:
            error.code == .invalidAddress ? configuration : temporary
        case let error as ZMQError:
            error.code == EADDRINUSE ? temporary : failure
        default:
            failure
        }
    }
}
