// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Ripple",
    products: [
        .library(name: "Ripple", targets: ["Ripple"]),
        .library(name: "RippleTesting", targets: ["RippleTesting"]),
        .executable(name: "ripple-playground", targets: ["ripple-playground"]),
        .executable(name: "ripple-logwatch", targets: ["ripple-logwatch"]),
    ],
    targets: [
        .target(
            name: "Ripple", dependencies: ["CRippleThread"], path: "Sources/Ripple",
            exclude: ["Core/Model"]),  // the Promela models (spin)
        // Inline C for the hot paths: the thread pointer (the delivery turn's uncontended path) and
        // StackGuard's per-thread stack bounds (the stack check on every send).
        .target(name: "CRippleThread", path: "Sources/CRippleThread"),
        // The test kit users import in their tests: marble and recorded test signals, a recording
        // subscriber, subscription logs, start(created:subscribed:disposed:). Framework-neutral.
        .target(name: "RippleTesting", dependencies: ["Ripple"], path: "Sources/RippleTesting"),
        .target(name: "RipplePlayground", dependencies: ["Ripple"], path: "Sources/RipplePlayground"),
        .executableTarget(name: "ripple-playground", dependencies: ["RipplePlayground"], path: "Playground"),
        .executableTarget(name: "ripple-logwatch", dependencies: ["Ripple"], path: "Examples/LogWatch"),
        // Shared by the test targets: the `.leakChecked` and `.offThePool` traits, workload sizes, `Locked`.
        .target(name: "RippleTestSupport", dependencies: ["Ripple"], path: "Tests/RippleTestSupport"),
        .testTarget(
            name: "RippleTests", dependencies: ["Ripple", "RippleTesting", "RippleTestSupport", "ripple-logwatch"],
            path: "Tests/RippleTests"),
        .testTarget(
            name: "RippleTestingTests", dependencies: ["Ripple", "RippleTesting", "RippleTestSupport"], path: "Tests/RippleTestingTests"),
        .testTarget(
            name: "PlaygroundTests",
            dependencies: ["RipplePlayground", "RippleTestSupport", "ripple-playground"],
            path: "Tests/PlaygroundTests",
            resources: [.copy("Golden")]),
    ],
    swiftLanguageModes: [.v6]
)
