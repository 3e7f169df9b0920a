// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Ripple",
    products: [
        .library(name: "Ripple", targets: ["Ripple"]),
        .executable(name: "ripple-playground", targets: ["ripple-playground"]),
    ],
    targets: [
        .target(name: "Ripple", path: "Sources/Ripple"),
        .executableTarget(name: "ripple-playground", dependencies: ["Ripple"], path: "Playground"),
        .testTarget(name: "RippleTests", dependencies: ["Ripple"], path: "Tests/RippleTests"),
    ],
    swiftLanguageModes: [.v6]
)
