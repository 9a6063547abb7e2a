// swift-tools-version:6.2
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

// The example chat backend (docs/integration.md): Hummingbird over the bus, a package
// of its own so that the bus (the repository root, by path) builds without a web framework.
let package = Package(
    name: "eventbus-chat-backend",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "chat-backend", targets: ["chat-backend"]),
    ],
    dependencies: [
        // Named: a path dependency's identity would be the checkout's folder name.
        .package(name: "eventbus", path: "../.."),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0"),
    ],
    targets: [
        .target(
            name: "ChatBackend",
            dependencies: [
                .product(name: "EventBus", package: "eventbus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "chat-backend",
            dependencies: [
                "ChatBackend",
                .product(name: "EventBus", package: "eventbus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The root's EventBusTesting runs the root's eventbus and plugins (its broker and
        // supervised-pipeline processes, build folders, temporary directories).
        .testTarget(
            name: "ChatBackendTests",
            dependencies: [
                "ChatBackend",
                .product(name: "EventBus", package: "eventbus"),
                .product(name: "EventBusTesting", package: "eventbus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
    ]
)
