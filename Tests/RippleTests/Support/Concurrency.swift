import Foundation
import RippleTestSupport
import Testing
import Synchronization

/// Runs `body` on `threads` real threads that start together (after a barrier), and
/// returns when all have finished — or, as a watchdog, after `Workload.hangLimit` (or `timeout`
/// seconds, if longer): then it records a failure naming the threads still running (trapped or
/// deadlocked) and returns without them. Returns whether every thread finished.
@discardableResult
func runConcurrently(
    threads: Int, timeout: Double? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable (Int) -> Void
) -> Bool {
    let ready = Atomic<Int>(0)
    let finished = Box<Set<Int>>([])
    let done = DispatchGroup()
    for index in 0..<threads {
        done.enter()
        let thread = Thread {
            ready.add(1, ordering: .relaxed)
            while ready.load(ordering: .relaxed) < threads { sched_yield() }  // barrier: start together
            body(index)
            finished.mutate { _ = $0.insert(index) }
            done.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    let limit = hangLimit(atLeast: timeout)
    if done.wait(timeout: .now() + limit) == .success { return true }
    let stuck = Set(0..<threads).subtracting(finished.value).sorted()
    Issue.record("threads \(stuck) of \(threads) did not return within \(limit) s: trapped or deadlocked", sourceLocation: sourceLocation)
    return false
}

/// Waits, blocking the calling thread, until `condition` holds; false if it still does not
/// after `Workload.hangLimit` or `timeout` seconds, whichever is longer (a hang). For tests that
/// run under `.offThePool`.
@discardableResult
func waitUntil(timeout: Double? = nil, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + .seconds(hangLimit(atLeast: timeout))
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        usleep(200)
    }
    return true
}

/// Detects overlapping callbacks: `enter` fails the check if another thread is inside.
final class OverlapDetector: @unchecked Sendable {
    private let inside = Atomic<Int>(0)
    private let overlaps = Atomic<Int>(0)
    var overlapCount: Int { overlaps.load(ordering: .relaxed) }
    func enter() {
        if inside.add(1, ordering: .acquiringAndReleasing).newValue > 1 {
            overlaps.add(1, ordering: .relaxed)
        }
    }
    func leave() { inside.subtract(1, ordering: .acquiringAndReleasing) }
}

/// Waits, suspending (no thread is blocked, and an actor the caller is isolated to stays free
/// between looks), until `condition` holds; false if it still does not after
/// `Workload.hangLimit` or `timeout` seconds, whichever is longer (a hang). For tests whose work
/// needs Swift's pool, an actor or the main queue, any of which may wait seconds for a core on a
/// busy machine.
@discardableResult
func eventually(
    timeout: Double? = nil, isolation: isolated (any Actor)? = #isolation, _ condition: () async -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(hangLimit(atLeast: timeout))
    while await !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

/// How long a watchdog waits: `Workload.hangLimit`, or `seconds` (scaled for sanitizers) if
/// longer. A shorter limit is never used: a wait that must end within seconds fails on a busy
/// machine, where a thread can wait that long for a core.
func hangLimit(atLeast seconds: Double?) -> Double {
    max(Workload.hangLimit, seconds.map(Workload.timeLimit) ?? 0)
}
