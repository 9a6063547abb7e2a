// swift-tools-version:6.2
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

// CloudEvents over HTTP (docs/http.md): a package of its own so that the bus (the
// repository root, by path) builds without a web framework; `make test` builds and tests it.
let package = Package(
    name: "eventbus-http",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "eventbus-http", targets: ["eventbus-http"]),
        .executable(name: "eventbus-http-bench", targets: ["eventbus-http-bench"]),
    ],
    dependencies: [
        // Named: a path dependency's identity would be the checkout's folder name.
        .package(name: "eventbus", path: "../.."),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
    ],
    targets: [
        // The mapping between HTTP and the bus, as values (the three CloudEvents modes,
        // errors to problem details, tokens to roles), and the Hummingbird server on it.
        .target(
            name: "HTTPIngress",
            dependencies: [
                .product(name: "EventBus", package: "eventbus"),
                .product(name: "EventBusSupervisor", package: "eventbus"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "eventbus-http",
            dependencies: [
                "HTTPIngress",
                .product(name: "EventBus", package: "eventbus"),
                .product(name: "EventBusSupervisor", package: "eventbus"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: strict
        ),
        // The edge's figures for `make bench` (docs/performance.md, "HTTP edge").
        .executableTarget(
            name: "eventbus-http-bench",
            dependencies: [
                .product(name: "EventBus", package: "eventbus"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HTTPIngressTests",
            dependencies: [
                "HTTPIngress",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "EventBus", package: "eventbus"),
                .product(name: "EventBusSupervisor", package: "eventbus"),
                .product(name: "EventBusTesting", package: "eventbus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "ZeroMQ", package: "eventbus"),
            ],
            swiftSettings: strict
        ),
    ]
)
