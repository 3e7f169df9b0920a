import Benchmark
import Foundation
import RippleWorkloads

// The suite on package-benchmark: every workload of RippleWorkloads for every system, one
// benchmark each, named `workload/system`, all in one run (`swift package benchmark`, see
// Benchmarks/README.md). Each iteration performs the case's operations; wall clock and malloc
// count are package-benchmark's, per iteration (ripple-report divides them by the operations);
// peak memory is the process's high-water mark after each iteration. RIPPLE_BENCH_QUICK=1 runs a tenth of the operations, a few iterations each,
// and the overload runs for half a second: for CI, where no time is judged.

let quick = ProcessInfo.processInfo.environment["RIPPLE_BENCH_QUICK"] != nil
// No `.peakMemoryResident`: package-benchmark samples it on a thread of its own that reads
// /proc/self/stat every ~5 ms, allocating as it does, and its malloc counts are process-wide, so
// those allocations land in whatever iteration is running (an iteration that only sleeps 50 ms
// counted 20 mallocs more than an empty one): counts would depend on time. The peak resident set
// is the kernel's high-water mark instead (`VmHWM`), read after each iteration's measured part.
let standardMetrics: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal]

/// A metric that records a value as it is (no scaling factor).
func custom(_ name: String, _ polarity: BenchmarkMetric.Polarity = .prefersSmaller) -> BenchmarkMetric {
    .custom(name, polarity: polarity, useScalingFactor: false)
}

/// Registers one case: each iteration runs `make`'s iteration and records its operations (and
/// its own metrics) after the measured part.
func register(_ name: String, extraMetrics: [BenchmarkMetric] = [], _ make: @escaping @Sendable () -> Iteration) {
    Benchmark(
        name,
        configuration: .init(
            metrics: standardMetrics + [custom(Suite.operationsMetric), custom(Suite.peakResidentMetric)] + extraMetrics,
            warmupIterations: 1,
            maxDuration: quick ? .milliseconds(200) : .seconds(1),
            maxIterations: quick ? 3 : 10_000),
        closure: { benchmark, iteration in
            iteration.run()
            benchmark.stopMeasurement()
            benchmark.measurement(custom(Suite.operationsMetric), iteration.operations)
            benchmark.measurement(custom(Suite.peakResidentMetric), ProcessMemory.peakResidentKiB())
            for (name, values) in iteration.metrics?() ?? [:] {
                for value in values { benchmark.measurement(custom(name), value) }
            }
        },
        setup: make)
}

let benchmarks: @Sendable () -> Void = {
    // What an iteration that does nothing allocates (package-benchmark's own bookkeeping around
    // the measured closure): ripple-report subtracts it from every malloc count.
    register(Suite.calibrationName) { Iteration(operations: 1, run: {}) }

    for suiteCase in Suite.cases {
        let operations = quick ? max(1, suiteCase.operations / 10) : suiteCase.operations
        var extraMetrics: [BenchmarkMetric] = []
        switch suiteCase.workload {
        case "idle-subscriptions", "idle-observations": extraMetrics.append(custom(Suite.bytesPerSubscriptionMetric))
        case "deliver-latency": extraMetrics.append(custom(Suite.latencyMetric))
        default: break
        }
        if suiteCase.system == System.observations {
            extraMetrics += [custom(Suite.deliveredMetric), custom(Suite.resetsMetric)]
        }
        register(suiteCase.name, extraMetrics: extraMetrics) { suiteCase.make(operations) }
    }

    // A producer ten times faster than its subscriber, through each overflow policy of
    // deliver(on:bufferSize:whenFull:), for 10 s (0.5 s quick): one iteration each. The run
    // itself is not package-benchmark's measured part (its jmh export needs a throughput of at
    // least one iteration per second): its figures, duration and peak resident set included,
    // are recorded as custom metrics, measured by the run.
    for (workload, policy) in Overload.policies {
        let overloadMetrics: [BenchmarkMetric] = [.wallClock, .throughput] + Overload.metricNames.map { custom($0) }
        Benchmark(
            "\(workload)/Ripple",
            configuration: .init(metrics: overloadMetrics, warmupIterations: 0, maxDuration: .seconds(60), maxIterations: 1)
        ) { benchmark in
            let result = Overload.run(policy, duration: quick ? .milliseconds(500) : .seconds(10))
            benchmark.startMeasurement()
            for (name, value) in zip(Overload.metricNames, result.figures) { benchmark.measurement(custom(name), value) }
            benchmark.stopMeasurement()
            if !result.problems.isEmpty {
                benchmark.error("\(workload): " + result.problems.joined(separator: "; "))
            }
        }
    }
}
