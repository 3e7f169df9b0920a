// swift-tools-version:6.1
import PackageDescription

// Ripple's benchmarks: a package of its own, so the library keeps no dependencies.
//
// - RippleWorkloads: every workload of the suite, for every system (Ripple, OpenCombine,
//   NotificationCenter, the Swift-native peers — AsyncStream with swift-async-algorithms'
//   share(), AsyncChannel, Observation's Observations —, the closure-chain reference, the floor),
//   as code that performs a given number of operations.
// - ClosureChain: the cold pipeline's `closure-chain` reference, in a module of its own so the
//   compiler cannot merge its closures with the Ripple workload's identical ones (that moved the
//   instruction gate's cold-pipeline figure by 4; OpenCombine's closures in RippleWorkloads could
//   still be merged with Ripple's — a gate rise with no library change may be that).
// - RippleBenchmarks: the suite on ordo-one's package-benchmark (`swift package benchmark`):
//   wall-clock percentiles, malloc counts (its malloc interposer), peak memory.
// - ripple-probe: one workload, Ripple (or `--system S`), a fixed number of operations, untimed: what the
//   instruction gate runs under callgrind.
// - ripple-report: reads the suite's export and prints the CSV table, the text table, or checks
//   the deterministic metrics against `alloc-baseline.txt`.
let package = Package(
    name: "RippleBenchmarks",
    dependencies: [
        .package(name: "Ripple", path: ".."),
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", exact: "0.14.0"),
        .package(url: "https://github.com/apple/swift-async-algorithms", exact: "1.1.4"),
        .package(url: "https://github.com/ordo-one/benchmark.git", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .target(name: "CHeapBytes", path: "Sources/CHeapBytes"),
        .target(name: "ClosureChain", path: "Sources/ClosureChain"),
        .target(
            name: "RippleWorkloads",
            dependencies: [
                "CHeapBytes",
                "ClosureChain",
                .product(name: "Ripple", package: "Ripple"),
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "OpenCombineDispatch", package: "OpenCombine"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ],
            path: "Sources/RippleWorkloads"),
        .executableTarget(
            name: "RippleBenchmarks",
            dependencies: [
                "RippleWorkloads",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/RippleBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
        .executableTarget(
            name: "ripple-probe",
            dependencies: ["RippleWorkloads"],
            path: "Sources/ripple-probe"),
        .executableTarget(
            name: "ripple-report",
            dependencies: ["RippleWorkloads"],
            path: "Sources/ripple-report"),
    ],
    swiftLanguageModes: [.v6]
)
