import ServiceLifecycle

/// The pipeline's plugin processes as one service of the supervisor's `ServiceGroup`: they
/// run side by side, and graceful shutdown reaches all of them at once (each gets SIGTERM,
/// and SIGKILL after ``SupervisorConfig/stopTimeout``), so stopping `eventbus up` waits one
/// stop timeout at most, not one per plugin. As separate services of the group they were
/// stopped one after the other: after a failed fsync stopped the broker, plugins waiting for
/// confirms that could not come held `eventbus up` 10 s each (chaos seed 13417130491573036430).
struct PluginProcesses: Service {
    let processes: [PluginProcess]

    /// Runs every plugin until graceful shutdown (or cancellation); returns once all have ended.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            for process in processes { group.addTask { await process.run() } }
        }
    }
}
