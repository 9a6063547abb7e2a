import CoreMetrics
import Prometheus
import Synchronization

/// Installs a Prometheus registry as the process's swift-metrics backend.
public enum MetricsBootstrap {
    private static let installed = Mutex<PrometheusCollectorRegistry?>(nil)

    /// The process's registry, bootstrapping swift-metrics with it on the first call.
    ///
    /// swift-metrics can be bootstrapped once per process; later calls return
    /// the same registry.
    public static func prometheus() -> PrometheusCollectorRegistry {
        installed.withLock { installed in
            if let installed { return installed }
            let registry = PrometheusCollectorRegistry()
            var factory = PrometheusMetricsFactory(registry: registry)
            factory.defaultDurationHistogramBuckets = [
                .microseconds(100), .microseconds(250), .microseconds(500),
                .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
                .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
                .seconds(1), .seconds(2), .seconds(5),
            ]
            MetricsSystem.bootstrap(factory)
            installed = registry
            return registry
        }
    }
}
