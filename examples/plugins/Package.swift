// swift-tools-version:6.2
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

// docs/plugins.md's example plugins, a package of their own on the bus (the
// repository root, by path). `make test` builds it: the root's supervisor tests run them.
let package = Package(
    name: "eventbus-example-plugins",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "identity", targets: ["identity"]),
        .executable(name: "counter", targets: ["counter"]),
    ],
    dependencies: [
        // Named: a path dependency's identity would be the checkout's folder name.
        .package(name: "eventbus", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "identity",
            dependencies: [.product(name: "EventBusPlugin", package: "eventbus")],
            path: "identity",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "counter",
            dependencies: [
                .product(name: "EventBus", package: "eventbus"),
                .product(name: "EventBusPlugin", package: "eventbus"),
            ],
            path: "counter",
            swiftSettings: strict
        ),
    ]
)
