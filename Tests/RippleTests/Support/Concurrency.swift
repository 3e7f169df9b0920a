import Foundation
import RippleTestSupport
import Testing
import Synchronization

/// Runs `body` on `threads` real threads that start together (after a barrier), and
/// returns when all have finished — or, as a watchdog, after `timeout` seconds: then it records a
/// failure naming the threads still running (trapped or deadlocked) and returns without them.
/// Returns whether every thread finished.
@discardableResult
func runConcurrently(
    threads: Int, timeout: Double = 60, sourceLocation: SourceLocation = #_sourceLocation,
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
    if done.wait(timeout: .now() + Workload.timeLimit(timeout)) == .success { return true }
    let stuck = Set(0..<threads).subtracting(finished.value).sorted()
    Issue.record("threads \(stuck) of \(threads) did not return within \(timeout) s: trapped or deadlocked", sourceLocation: sourceLocation)
    return false
}

/// Waits (blocking, up to `timeout` seconds) until `condition` holds; returns whether it did.
@discardableResult
func waitUntil(timeout: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() > deadline { return false }
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

/// Waits without blocking a thread (for tests whose work runs on Swift Concurrency's pool).
@discardableResult
func eventually(timeout: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() > deadline { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}
