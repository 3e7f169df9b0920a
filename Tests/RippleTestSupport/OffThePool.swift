import Foundation
import Synchronization
import Testing

/// A trait that runs each test on a thread of its own instead of Swift's cooperative pool,
/// at most two such tests at a time.
///
/// Swift Testing runs every test as a task on the cooperative pool, which has one thread per
/// core — two on the CI machine. A synchronous test that blocks (joins its threads, waits on a
/// semaphore, builds a 100,000-level chain) holds one of those threads for its whole run; two of
/// them hold the pool, and every actor job, main-actor hop and `Task.sleep` wake-up of the other
/// suites waits behind them: the actor suites' 60-s waits can run out that way, even on a quiet
/// machine, once the heavy suites together take longer than that. Under this trait a test's body
/// runs on a ``DedicatedThreadExecutor`` (its task's executor preference), so the pool stays free;
/// a gate of two keeps the heavy tests from all running at once on two cores.
///
/// Child tasks of such a test run on its thread too (they inherit the preference), one at a
/// time: a test whose child tasks block waiting for each other does not belong under this trait.
///
///     @Suite(.leakChecked, .offThePool) struct SubjectConcurrencyTests { … }
public struct OffThePool: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    /// At most this many tests under the trait run at once.
    static let gate = Gate(width: 2)

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else { return try await function() }  // the suite itself
        await Self.gate.enter()
        defer { Self.gate.leave() }
        let executor = DedicatedThreadExecutor(name: test.name)
        defer { executor.finish() }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == OffThePool {
    /// Runs each test on a thread of its own, not on Swift's cooperative pool (see ``OffThePool``).
    public static var offThePool: Self { OffThePool() }
}

/// A task executor with one thread of its own, which runs its jobs in the order they came.
///
/// Foundation and Dispatch have no executor that owns a thread (a `DispatchQueue` runs on
/// libdispatch's worker threads, whose stack size is not ours to choose; deep-chain tests need
/// 8 MiB). After ``finish()`` the thread runs what is queued and ends; a job that comes later goes
/// to the global concurrent executor.
public final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: the only mutable state is `state`, behind its lock; `ready` is thread-safe.
    // An NSLock (a pthread mutex), not Synchronization's Mutex: ThreadSanitizer sees through
    // pthread locks but not Mutex's futex, and reported every contended test start as a race.
    private let state = Locked<(jobs: [UnownedJob], finished: Bool)>(([], false))
    private let ready = DispatchSemaphore(value: 0)

    /// The name of the dedicated thread running the caller, or nil on any other thread.
    /// (Linux Foundation's `Thread.name` is unreliable: read on the thread it may show another's.)
    public static var currentName: String? { Thread.current.threadDictionary[nameKey] as? String }
    private static let nameKey = "RippleTestSupport.DedicatedThreadExecutor.name"

    /// Starts the thread, named `name`, with an 8-MiB stack.
    public init(name: String) {
        let thread = Thread { [self] in
            Thread.current.threadDictionary[Self.nameKey] = name
            run()  // the thread keeps the executor until it ends
        }
        thread.name = name
        thread.stackSize = 8 << 20
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let queued = state.withLock { state in
            if state.finished { return false }
            state.jobs.append(job)
            return true
        }
        if queued {
            ready.signal()
        } else {  // a straggler after the test (say a task that outlived it): the pool runs it
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
        }
    }

    /// Lets the thread end once it has run every job queued so far.
    public func finish() {
        state.withLock { $0.finished = true }
        ready.signal()
    }

    private func run() {
        while true {
            ready.wait()
            // One signal per job and one for finish: an empty queue here means finish was called.
            let next: UnownedJob?? = state.withLock { state in
                if !state.jobs.isEmpty { return .some(state.jobs.removeFirst()) }
                return state.finished ? .none : .some(nil)
            }
            switch next {
            case .some(.some(let job)): job.runSynchronously(on: asUnownedTaskExecutor())
            case .some(.none): continue
            case .none: return
            }
        }
    }
}

/// An asynchronous counting semaphore: `enter` suspends (holding no thread) while `width`
/// holders are inside; `leave` lets the longest waiter in.
final class Gate: Sendable {
    private let state: Locked<(free: Int, waiting: [CheckedContinuation<Void, Never>])>

    init(width: Int) { state = Locked((width, [])) }

    func enter() async {
        await withCheckedContinuation { (entered: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.free > 0 { state.free -= 1; return true }
                state.waiting.append(entered)
                return false
            }
            if now { entered.resume() }
        }
    }

    func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiting.isEmpty { state.free += 1; return nil }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
