// swift-tools-version:6.0
import PackageDescription

// Ripple's benchmarks: a package of its own, so the library keeps no dependencies.
let package = Package(
    name: "RippleBenchmarks",
    dependencies: [
        .package(name: "Ripple", path: ".."),
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", exact: "0.14.0"),
    ],
    targets: [
        .target(name: "MallocCounter", path: "Sources/MallocCounter"),
        .executableTarget(
            name: "ripple-bench",
            dependencies: [
                "MallocCounter",
                .product(name: "Ripple", package: "Ripple"),
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "OpenCombineDispatch", package: "OpenCombine"),
            ],
            path: "Sources/ripple-bench"),
    ],
    swiftLanguageModes: [.v6]
)
