// swift-tools-version:6.2
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "eventbus",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "EventBusCore", targets: ["EventBusCore"]),
        .library(name: "EventBus", targets: ["EventBus"]),
        .library(name: "EventBusBroker", targets: ["EventBusBroker"]),
        .library(name: "EventBusPlugin", targets: ["EventBusPlugin"]),
        .library(name: "EventBusSupervisor", targets: ["EventBusSupervisor"]),
        // The tests' process helpers, for the root's tests and the example packages' (examples/*).
        .library(name: "EventBusTesting", targets: ["EventBusTesting"]),
        .library(name: "ReceiptReducer", targets: ["ReceiptReducer"]),
        .executable(name: "eventbus", targets: ["eventbus"]),
        // The fault campaign's LD_PRELOAD shim that fails fsync on demand (docs/reliability.md).
        .library(name: "eventbus-chaos-fsync", type: .dynamic, targets: ["CChaosFsync"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CZeroMQ",
            pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"])]
        ),
        .target(
            name: "ZeroMQ",
            dependencies: ["CZeroMQ"],
            swiftSettings: strict
        ),
        .target(name: "CCRC32C"),
        .target(name: "CPrefetch"),
        .target(name: "CJSONBits"),
        .target(name: "CSpawn"),
        // Events, JSON, wire formats, validation and the plugin API: no sockets, no libzmq.
        .target(
            name: "EventBusCore",
            dependencies: ["CCRC32C", "CJSONBits"],
            swiftSettings: strict
        ),
        // The protocol client (ZeroMQ); re-exports EventBusCore.
        .target(
            name: "EventBus",
            dependencies: [
                "EventBusCore",
                "ZeroMQ",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "EventBusBroker",
            dependencies: [
                "EventBus",
                "ZeroMQ",
                "CPrefetch",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "EventBusMetrics",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        // One bridge from a blocking run loop (broker, readiness watch, plugin runner) to swift-service-lifecycle.
        .target(
            name: "EventBusService",
            dependencies: [.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
            swiftSettings: strict
        ),
        .target(
            name: "EventBusPlugin",
            dependencies: [
                "EventBusCore",
                "EventBus",
                "EventBusJetStream",
                "ZeroMQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                "EventBusMetrics",
                "EventBusService",
            ],
            swiftSettings: strict
        ),
        .target(
            name: "EventBusSupervisor",
            dependencies: [
                "EventBus",
                "EventBusBroker",
                "ZeroMQ",
                "CSpawn",
                "EventBusService",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "eventbus",
            dependencies: [
                "EventBus",
                "EventBusBroker",
                "EventBusJetStream",
                "EventBusSupervisor",
                "EventBusMetrics",
                "EventBusService",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // What the process-level tests share (root and examples): broker, `eventbus up` and
        // supervised-pipeline processes, build folders, temporary directories, endpoints.
        .target(
            name: "EventBusTesting",
            dependencies: [
                "EventBus",
                "EventBusBroker",
                "EventBusSupervisor",
                "ZeroMQ",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "EventBusFuzzing",
            dependencies: ["EventBus", "EventBusBroker"],
            swiftSettings: strict
        ),
        .target(name: "CLibFuzzer"),
        .executableTarget(
            name: "eventbus-fuzz",
            dependencies: ["CLibFuzzer", "EventBusFuzzing"],
            swiftSettings: strict
        ),
        .target(name: "ReceiptReducer", dependencies: ["EventBusCore"], path: "plugins/ReceiptReducer", swiftSettings: strict),
        .executableTarget(
            name: "receipt-reducer",
            dependencies: ["EventBus", "EventBusPlugin", "ReceiptReducer"],
            path: "plugins/receipt-reducer",
            swiftSettings: strict
        ),
        .target(
            name: "PrivacyFilter",
            dependencies: [
                "EventBusCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            path: "plugins/PrivacyFilter",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "read-privacy",
            dependencies: ["EventBusPlugin", "PrivacyFilter"],
            path: "plugins/read-privacy",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "delivery-privacy",
            dependencies: ["EventBusPlugin", "PrivacyFilter"],
            path: "plugins/delivery-privacy",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "eventbus-reducer-bench",
            dependencies: ["EventBus", "ReceiptReducer"],
            path: "Benchmarks/ReducerBench",
            swiftSettings: strict
        ),
        // The seeded realistic chat workload (`eventbus-bench workload`, the chaos campaign's publishers).
        .target(name: "ChatWorkload", dependencies: ["EventBusCore"], path: "Benchmarks/ChatWorkload", swiftSettings: strict),
        .executableTarget(
            name: "eventbus-bench",
            dependencies: ["ZeroMQ", "EventBus", "NATS", "ChatWorkload"],
            path: "Benchmarks/EventBusBench",
            swiftSettings: strict
        ),
        // The fault campaign (issue 20, docs/reliability.md): its checker and model, pure, and
        // `eventbus-chaos`, which runs rounds of `eventbus up` under faults (`make chaos`).
        .target(name: "CChaosFsync"),
        .target(
            name: "EventBusChaos",
            dependencies: ["EventBusCore", "ReceiptReducer", "PrivacyFilter"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "eventbus-chaos",
            dependencies: [
                "EventBusChaos", "ChatWorkload", "EventBus", "EventBusTesting", "ZeroMQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "EventBusChaosTests",
            dependencies: ["EventBusChaos", "EventBusCore", "EventBusBroker", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"], swiftSettings: strict),
        // NATS JetStream backend (issue 17): the C client and its Swift wrapper.
        .systemLibrary(
            name: "CNATS",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"])]
        ),
        .target(name: "NATS", dependencies: ["CNATS"], swiftSettings: strict),
        // bcrypt, so that the servers' configurations hold hashes, never passwords.
        .systemLibrary(
            name: "CCrypt",
            pkgConfig: "libxcrypt",
            providers: [.apt(["libcrypt-dev"])]
        ),
        .testTarget(name: "NATSTests", dependencies: ["NATS", "EventBusTesting"], swiftSettings: strict),
        // The JetStream backend: a local cluster of nats-servers and the stateless EB1 gateway.
        .target(
            name: "EventBusJetStream",
            dependencies: [
                "EventBus",
                // Keys and roles as the broker's (SecurityConfig, BrokerAccess, ZAPHandler).
                "EventBusBroker",
                "ZeroMQ",
                "NATS",
                "CCrypt",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "EventBusJetStreamTests",
            dependencies: ["EventBusJetStream", "EventBus", "EventBusTesting", "NATS", "ReceiptReducer", "ZeroMQ"],
            swiftSettings: strict
        ),
        .testTarget(name: "EventBusMetricsTests", dependencies: ["EventBusMetrics", .product(name: "Prometheus", package: "swift-prometheus")], swiftSettings: strict),
        .testTarget(name: "EventBusTests", dependencies: ["EventBusCore", "EventBus", "EventBusFuzzing", "CJSONBits"], swiftSettings: strict),
        .testTarget(
            name: "EventBusBrokerTests",
            dependencies: ["EventBusBroker", "EventBus", "EventBusChaos", "EventBusTesting", "ZeroMQ"],
            swiftSettings: strict
        ),
        .testTarget(name: "ReceiptReducerTests", dependencies: ["ReceiptReducer", "EventBusCore"], swiftSettings: strict),
        .testTarget(
            name: "PrivacyFilterTests",
            dependencies: ["PrivacyFilter", "ReceiptReducer", "EventBusPlugin", "EventBusBroker", "EventBus", "ZeroMQ"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "EventBusPluginTests",
            dependencies: [
                "EventBusPlugin", "EventBusService", "EventBusBroker", "EventBus", "ZeroMQ",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "EventBus", "EventBusBroker", "EventBusFuzzing", "EventBusSupervisor", "EventBusTesting", "ReceiptReducer", "ZeroMQ",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
    ]
)
