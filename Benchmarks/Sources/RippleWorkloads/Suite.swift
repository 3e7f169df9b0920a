import Foundation

/// One system's side of one workload, set up and ready: `run()` performs `operations`
/// operations (an operation is what the workload's table row says: one delivery, one element,
/// one subscribe + dispose…). Set-up (subjects, live subscribers) happens before, untimed.
public struct Iteration {
    /// Operations one `run()` performs.
    public let operations: Int
    /// Performs the operations.
    public let run: () -> Void
    /// Figures of the last `run()` beyond time and allocations, by metric name (each value one
    /// sample): `idle-subscriptions`' bytes per subscription, `deliver-latency`'s latencies,
    /// the values `Observations`' observers saw.
    public var metrics: (() -> [String: [Int]])? = nil

    public init(operations: Int, run: @escaping () -> Void, metrics: (() -> [String: [Int]])? = nil) {
        self.operations = operations
        self.run = run
        self.metrics = metrics
    }
}

/// One row of the suite: a workload for one system.
public struct Case: Sendable {
    public let workload: String
    public let system: String
    /// Operations per iteration in a full run (a quick run divides them).
    public let operations: Int
    /// Sets the workload up for about `operations` operations per run (rounded to whole sends).
    public let make: @Sendable (_ operations: Int) -> Iteration

    /// The benchmark's name: `workload/system`.
    public var name: String { "\(workload)/\(system)" }
}

/// The systems, named as in every table (the floor's system is `floor`).
public enum System {
    public static let ripple = "Ripple"
    public static let openCombine = "OpenCombine"
    public static let notificationCenter = "NotificationCenter"
    public static let floor = "floor"
    /// A reference, not a peer: the cold pipeline's stages as plain closures composed at run time
    /// (what any library whose operators return one signal type composes), without Ripple's
    /// subscription, disposal checks or serialization.
    public static let closureChain = "closure-chain"
    /// The Swift-native peers: an `AsyncStream` shared with swift-async-algorithms' `share()`
    /// (`fanout-N`), its `AsyncChannel` (`deliver-latency`), an `AsyncStream` iterated on an
    /// actor (`actor-hop`), Observation's `Observations` (`behavior-fanout-10`).
    public static let asyncStreamShare = "AsyncStream.share"
    public static let asyncChannel = "AsyncChannel"
    public static let asyncStream = "AsyncStream"
    public static let observations = "Observations"
    public static let peers: Set<String> = [openCombine, notificationCenter, asyncStreamShare, asyncChannel, asyncStream, observations]
    /// Peers that deliver fewer events than were sent (`Observations` coalesces changes): their
    /// time per operation is of other work, so no ratio takes them as the best peer.
    public static let coalescing: Set<String> = [observations]
    /// The order systems appear in within a workload.
    public static let order = [
        ripple, openCombine, notificationCenter, asyncStreamShare, asyncChannel, asyncStream, observations, closureChain, floor,
    ]
}

/// Every workload of the suite, each beside its peers and the floor, in table order.
public enum Suite {
    public static let cases: [Case] = {
        var cases: [Case] = []
        func add(_ workload: String, _ operations: Int, _ systems: [(String, @Sendable (Int) -> Iteration)]) {
            for (system, make) in systems {
                cases.append(Case(workload: workload, system: system, operations: operations, make: make))
            }
        }
        /// `systems` with the Swift-native `peers` before the floor.
        func adding(_ peers: [(String, @Sendable (Int) -> Iteration)], to systems: [(String, @Sendable (Int) -> Iteration)])
            -> [(String, @Sendable (Int) -> Iteration)] {
            let floor = systems.firstIndex { $0.0 == System.floor } ?? systems.endIndex
            return Array(systems[..<floor]) + peers + systems[floor...]
        }
        for subscribers in [1, 10, 100, 1000] {
            let peers = subscribers == 100 ? [] : [AsyncShareFanout.system(subscribers: subscribers)]
            add("fanout-\(subscribers)", 100_000, adding(peers, to: Fanout.systems(subscribers: subscribers)))
        }
        add("behavior-fanout-10", 100_000, adding([ObservationsState.system], to: BehaviorFanout.systems))
        add("replay-send", 100_000, Replay.sendSystems)
        add("replay-subscribe", 1_000, Replay.subscribeSystems)
        add("cold-pipeline", 100_000, ColdPipeline.systems)
        for live in [10, 1_000, 10_000] {
            add("subscribe-dispose-\(live)", 10_000, SubscribeDispose.systems(live: live))
        }
        add("deliver-serial", 100_000, DeliverSerial.systems)
        add("actor-hop", 100_000, adding([StreamActorHop.system], to: ActorHop.systems))
        add("contended-send", 1_000_000, ContendedSend.systems(threads: 2))
        add("contended-send-4", 1_000_000, ContendedSend.systems(threads: 4))
        add("contended-send-8", 1_000_000, ContendedSend.systems(threads: 8))
        add("idle-subscriptions", 100_000, IdleSubscriptions.systems)
        add("idle-observations", 100_000, IdleObservations.systems)
        add("deliver-latency", 1_000, adding([ChannelLatency.system], to: DeliverLatency.systems))
        return cases
    }()

    /// The workload names, in table order.
    public static var workloads: [String] {
        var seen = Set<String>()
        return cases.map(\.workload).filter { seen.insert($0).inserted }
    }

    /// The workloads whose allocation counts do not depend on thread timing (one thread, no
    /// scheduler): the ones the allocation check gates.
    public static let deterministicWorkloads: Set<String> = [
        "fanout-1", "fanout-10", "fanout-100", "fanout-1000", "behavior-fanout-10", "replay-send",
        "replay-subscribe", "cold-pipeline", "subscribe-dispose-10", "subscribe-dispose-1000",
        "subscribe-dispose-10000",
    ]

    /// The benchmark that measures an empty iteration (package-benchmark's own allocations).
    public static let calibrationName = "calibration/empty"
    /// The custom metric each iteration records its operation count in.
    public static let operationsMetric = "operations"

    /// The metric names `Iteration.metrics` reports.
    public static let bytesPerSubscriptionMetric = "bytes per subscription"
    public static let latencyMetric = "latency (ns)"
    /// The values a run's observers actually saw, all observers together (`Observations`
    /// coalesces, so fewer than the run's operations).
    public static let deliveredMetric = "delivered"
    /// The times a run set its last value again because it had not reached every observer
    /// within 1 ms (`Observations` can miss a change on Swift 6.3.1, see `ObservationsState`).
    public static let resetsMetric = "last value re-set"
    /// The process's peak resident set (`VmHWM`) after an iteration, in KiB: the same name the
    /// overload runs record theirs under.
    public static let peakResidentMetric = "peak resident (KiB)"
}

/// Where subscribers add what they receive, so no delivery can be optimized away.
final class Accumulator: @unchecked Sendable {
    var total = 0
    init() {}
}

/// Hands a value to another thread in a benchmark that synchronizes it itself.
final class UncheckedBox<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}

/// The process's memory as the kernel counts it.
public enum ProcessMemory {
    /// The peak resident set of this process so far (`VmHWM` of /proc/self/status), in KiB; 0
    /// where it cannot be read. Allocates (it reads a file): call it outside a measured part.
    public static func peakResidentKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            // "VmHWM:\t   24576 kB"
            return Int(line.dropFirst("VmHWM:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? 0
        }
        return 0
    }
}
