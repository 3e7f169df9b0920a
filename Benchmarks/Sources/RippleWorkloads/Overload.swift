import Dispatch
import Foundation
import OpenCombine
import OpenCombineDispatch
import Ripple
import Synchronization

/// Nanoseconds on the monotonic clock.
@inline(__always) func nanoseconds() -> Int { Int(DispatchTime.now().uptimeNanoseconds) }

// MARK: deliver-latency

/// Operation = one value sent from this thread to a subscriber on a serial queue, one at a
/// time (the next is sent once the last arrived); each value's latency from the send to the
/// callback is one sample. The floor is one `DispatchQueue.async` per value.
enum DeliverLatency {
    static let systems: [(String, @Sendable (Int) -> Iteration)] = [
        (System.ripple, { count in
            let queue = SerialQueueScheduler(label: "bench.latency.ripple")
            let subject = Ripple.Subject<Int>()
            let probe = LatencyProbe(count: count)
            let subscription = subject.deliver(on: queue).subscribeNext { sent in probe.arrived(sent) }
            return probe.iteration(keeping: subscription) { subject.sendNext(nanoseconds()) }
        }),
        (System.openCombine, { count in
            let queue = DispatchQueue(label: "bench.latency.opencombine")
            let subject = PassthroughSubject<Int, Never>()
            let probe = LatencyProbe(count: count)
            let subscription = subject.receive(on: queue.ocombine).sink { sent in probe.arrived(sent) }
            return probe.iteration(keeping: subscription) { subject.send(nanoseconds()) }
        }),
        (System.floor, { count in
            let queue = DispatchQueue(label: "bench.latency.floor")
            let probe = LatencyProbe(count: count)
            return probe.iteration(keeping: queue) {
                let sent = nanoseconds()
                queue.async { probe.arrived(sent) }
            }
        }),
    ]
}

/// Records the latency of values that carry their send time, one value in flight at a time.
final class LatencyProbe: @unchecked Sendable {
    private var samples: [Int]
    private let arrival = DispatchSemaphore(value: 0)

    init(count: Int) { samples = []; samples.reserveCapacity(count) }

    /// On the delivering thread: the value sent at `sent` has arrived.
    func arrived(_ sent: Int) {
        samples.append(nanoseconds() - sent)
        arrival.signal()
    }

    /// An iteration that calls `send` `count` times, each after the previous value arrived.
    func iteration(keeping alive: Any, send: @escaping () -> Void) -> Iteration {
        let count = samples.capacity
        return Iteration(operations: count, run: {
            self.samples.removeAll(keepingCapacity: true)
            withExtendedLifetime(alive) {
                for _ in 0..<count {
                    send()
                    self.arrival.wait()
                }
            }
        }, metrics: { [Suite.latencyMetric: self.samples] })
    }
}

// MARK: overload-*

/// A producer 10× faster than its subscriber, through `deliver(on:bufferSize:whenFull:)`.
public enum Overload {
    /// The policies, by workload name.
    public static let policies: [(workload: String, policy: DeliveryOverflow)] = [
        ("overload-wait", .wait), ("overload-drop-oldest", .dropOldest),
        ("overload-drop-newest", .dropNewest), ("overload-fail", .fail),
    ]
    /// The subscriber's cost per value, and the producer's pace (ten times as fast).
    public static let callbackNanoseconds = 20_000
    public static let sendIntervalNanoseconds = 2_000
    public static let bufferSize = 1_024

    /// What one overload run saw.
    public struct Result: Sendable {
        public var sent = 0
        public var delivered = 0
        public var lost: Int { sent - delivered }
        public var seconds = 0.0
        /// Delivered values per second.
        public var throughput: Double { Double(delivered) / max(seconds, 1e-9) }
        /// The largest growth of the resident set seen during the run, in KiB.
        public var residentGrowthKiB = 0
        /// The largest resident set seen during the run, in KiB.
        public var peakResidentKiB = 0
        /// Whether the subscription ended with `DeliveryOverflowError`.
        public var failed = false
        /// Whatever contradicts the policy; empty when the counts make sense.
        public var problems: [String] = []

        /// The figures named by `Overload.metricNames`, in order.
        public var figures: [Int] {
            [Int((seconds * 1_000).rounded()), sent, delivered, lost, Int(throughput.rounded()), peakResidentKiB, residentGrowthKiB,
             problems.count]
        }
    }

    /// The names of `Result.figures`, as the benchmarks record them.
    public static let metricNames = [
        "duration (ms)", "sent", "delivered", "lost", "delivered per s", "peak resident (KiB)", "resident growth (KiB)",
        "policy violations",
    ]

    /// Sends one value every `sendIntervalNanoseconds` for `duration` (or until the subscription
    /// fails) to a subscriber that spends `callbackNanoseconds` on each, then completes and
    /// waits for the subscriber to finish; checks the counts against `policy`.
    public static func run(_ policy: DeliveryOverflow, duration: Duration) -> Result {
        let scheduler = SerialQueueScheduler(label: "bench.overload")
        // Wake the queue's thread first, so the run does not start with the thread's creation.
        let warm = DispatchSemaphore(value: 0)
        _ = scheduler.schedule { warm.signal() }
        warm.wait()
        let subject = Ripple.Subject<Int>()
        let state = OverloadSubscriber()
        let finished = DispatchSemaphore(value: 0)
        let subscription = subject.deliver(on: scheduler, bufferSize: bufferSize, whenFull: policy).subscribe(
            next: { value in state.received(value) },
            error: { error in state.ended(with: error); finished.signal() },
            completed: { finished.signal() })

        var result = Result()
        let residentAtStart = residentKiB()
        let start = nanoseconds()
        let end = start + Int(duration.components.seconds) * 1_000_000_000 + Int(duration.components.attoseconds / 1_000_000_000)
        var now = start
        while now < end && !state.hasFailed.load(ordering: .acquiring) {
            subject.sendNext(result.sent)
            result.sent += 1
            if result.sent % 4_096 == 0 {
                let resident = residentKiB()
                result.peakResidentKiB = max(result.peakResidentKiB, resident)
                result.residentGrowthKiB = max(result.residentGrowthKiB, resident - residentAtStart)
            }
            let next = start + result.sent * sendIntervalNanoseconds
            repeat { now = nanoseconds() } while now < next
        }
        subject.sendCompleted()
        finished.wait()
        result.seconds = Double(nanoseconds() - start) / 1e9
        subscription.dispose()
        let resident = residentKiB()
        result.peakResidentKiB = max(result.peakResidentKiB, resident)
        result.residentGrowthKiB = max(result.residentGrowthKiB, resident - residentAtStart)

        result.delivered = state.count
        result.failed = state.error != nil
        result.problems = check(policy, result, state)
        return result
    }

    private static func check(_ policy: DeliveryOverflow, _ result: Result, _ state: OverloadSubscriber) -> [String] {
        var problems: [String] = []
        if state.outOfOrder > 0 { problems.append("\(state.outOfOrder) values arrived out of order") }
        if result.delivered > result.sent { problems.append("delivered \(result.delivered) of \(result.sent) sent") }
        if result.residentGrowthKiB > 64 * 1_024 {
            problems.append("the resident set grew by \(result.residentGrowthKiB) KiB: the buffer is not bounded")
        }
        switch policy {
        case .wait:
            if result.lost != 0 { problems.append(".wait lost \(result.lost) values") }
            if state.error != nil { problems.append(".wait failed: \(state.error!)") }
            // The sender waits for room: it cannot run ahead of the subscriber by more than the buffer.
            let paced = Double(result.sent) * Double(callbackNanoseconds) / 1e9
            if paced > result.seconds * 1.05 + 0.05 { problems.append(".wait sent faster than the subscriber took values") }
        case .dropOldest, .dropNewest:
            if result.lost <= 0 { problems.append("no value was lost: the producer was not faster than the subscriber") }
            if state.error != nil { problems.append("\(policy) failed: \(state.error!)") }
            if policy == .dropOldest && state.last != result.sent - 1 {
                problems.append(".dropOldest did not deliver the newest value (\(result.sent - 1)); the last was \(state.last)")
            }
            if policy == .dropNewest && state.firstGap < bufferSize {
                problems.append(".dropNewest lost a value (\(state.firstGap)) before the buffer (\(bufferSize)) was full")
            }
        case .fail:
            if state.error as? DeliveryOverflowError != DeliveryOverflowError(bufferSize: bufferSize) {
                problems.append(".fail ended with \(state.error.map { "\($0)" } ?? "no error"), not DeliveryOverflowError(bufferSize: \(bufferSize))")
            }
            if state.firstGap != .max { problems.append(".fail delivered values after a gap (at \(state.firstGap))") }
            if result.lost <= 0 { problems.append(".fail lost nothing") }
        @unknown default:
            break
        }
        return problems
    }

    /// The resident set of this process, in KiB (`/proc/self/statm`).
    static func residentKiB() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1_024
    }
}

/// The slow subscriber of an overload run: spends `callbackNanoseconds` per value and checks
/// the order. Touched on the scheduler's queue only, read after the terminal event.
final class OverloadSubscriber: @unchecked Sendable {
    var count = 0
    var last = -1
    var outOfOrder = 0
    /// The first value that did not follow its predecessor (`count` while none was skipped).
    var firstGap = Int.max
    var error: (any Error)?
    let hasFailed = Atomic<Bool>(false)

    func received(_ value: Int) {
        if value <= last { outOfOrder += 1 }
        if value != last + 1 && firstGap == .max { firstGap = last + 1 }
        last = value
        count += 1
        let until = nanoseconds() + Overload.callbackNanoseconds
        while nanoseconds() < until {}
    }

    func ended(with error: any Error) {
        self.error = error
        hasFailed.store(true, ordering: .releasing)
    }
}
