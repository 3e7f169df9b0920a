// swift-tools-version:6.1
import PackageDescription

// Ripple on PostgreSQL: a replay subject shared by every instance of a service (RipplePostgres),
// a scheduler over a SwiftNIO event loop (RippleNIO), and the `ripple-feed` example.
// Depends on Ripple by path; the root package keeps no dependencies.
let package = Package(
    name: "RipplePostgres",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "RipplePostgres", targets: ["RipplePostgres"]),
        .library(name: "RippleNIO", targets: ["RippleNIO"]),
        .executable(name: "ripple-feed", targets: ["ripple-feed"]),
        .executable(name: "ripple-feed-bench", targets: ["ripple-feed-bench"]),
    ],
    dependencies: [
        .package(name: "Ripple", path: "../.."),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        .target(
            name: "RippleNIO",
            dependencies: [
                .product(name: "Ripple", package: "Ripple"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
        .target(
            name: "RipplePostgres",
            dependencies: [
                .product(name: "Ripple", package: "Ripple"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        .executableTarget(
            name: "ripple-feed",
            dependencies: ["RipplePostgres", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]),
        .executableTarget(
            name: "ripple-feed-bench",
            dependencies: ["RipplePostgres", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]),
        .testTarget(
            name: "RippleNIOTests",
            dependencies: [
                "RippleNIO",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
        .testTarget(
            name: "RipplePostgresTests",
            dependencies: [
                "RipplePostgres", "ripple-feed", .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
