// swift-tools-version:6.2
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

// The example websocket gateway and its fan-out benchmark (`make bench`): a package of
// its own so that the bus (the repository root, by path) builds without a web framework.
let package = Package(
    name: "eventbus-chat-gateway",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "chat-gateway", targets: ["chat-gateway"]),
        .executable(name: "eventbus-gateway-bench", targets: ["eventbus-gateway-bench"]),
    ],
    dependencies: [
        // Named: a path dependency's identity would be the checkout's folder name.
        .package(name: "eventbus", path: "../.."),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.0.0"),
    ],
    targets: [
        .target(
            name: "ChatGateway",
            dependencies: [
                .product(name: "EventBus", package: "eventbus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "chat-gateway",
            dependencies: [
                "ChatGateway",
                .product(name: "EventBus", package: "eventbus"),
                .product(name: "EventBusSupervisor", package: "eventbus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "eventbus-gateway-bench",
            dependencies: [
                .product(name: "EventBus", package: "eventbus"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            path: "Benchmarks/GatewayBench",
            swiftSettings: strict
        ),
        // The root's EventBusTesting runs the root's eventbus and plugins (its broker and
        // supervised-pipeline processes, build folders, temporary directories).
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "ChatGateway",
                .product(name: "EventBus", package: "eventbus"),
                .product(name: "EventBusTesting", package: "eventbus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
    ]
)
