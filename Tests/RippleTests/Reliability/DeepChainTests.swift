import Foundation
import Testing
@testable import Ripple
import RippleTestSupport

/// Chains of 100,000 operators built by a loop: subscribing, delivering, disposing and
/// releasing them all recurse once per operator, and must finish on an ordinary thread.
@Suite(.leakChecked, .offThePool) struct DeepChainTests {
    static let depth = Workload.size(100_000)

    @Test func aChainOf100kMapsDeliversCompletesAndReleasesEverything() {
        let baseline = liveSubscriptionsInThisTest
        weak var weakSource: Signal<Int>?
        weak var weakHead: Signal<Int>?
        do {
            let source = Signal.from([1, 2, 3])
            weakSource = source
            var signal = source
            for _ in 0..<Self.depth { signal = signal.map { $0 + 1 } }
            weakHead = signal
            let recorder = Recorder<Int>()
            signal.subscribe(recorder)
            #expect(recorder.values == [1, 2, 3].map { $0 + Self.depth })
            #expect(recorder.isCompleted)
        }
        #expect(weakHead == nil)
        #expect(weakSource == nil)
        #expect(liveSubscriptionsInThisTest == baseline)
    }

    @Test func aMixedChainOf100kOperatorsOnASubjectStopsAtDispose() {
        let baseline = liveSubscriptionsInThisTest
        do {
            let subject = Subject<Int>()
            var signal = subject.map { $0 }
            for level in 0..<Self.depth {
                switch level % 6 {
                case 0: signal = signal.map { $0 + 1 }
                case 1: signal = signal.filter { _ in true }
                case 2: signal = signal.compactMap { Optional($0) }
                case 3: signal = signal.scan(0) { _, value in value }
                case 4: signal = signal.distinctUntilChanged()
                default: signal = signal.onNext { _ in }
                }
            }
            let recorder = Recorder<Int>()
            let subscription = signal.subscribe(recorder)
            subject.sendNext(0)
            subject.sendNext(10)
            subscription.dispose()
            subject.sendNext(20)
            let maps = (Self.depth + 5) / 6
            #expect(recorder.events == [.next(maps), .next(10 + maps)])
            #expect(subject.storage.subscriberCount == 0)
        }
        #expect(liveSubscriptionsInThisTest == baseline)
    }

    @Test func aDeepChainEndsWithItsSourcesErrorExactlyOnce() {
        var signal = Signal<Int> { subscriber in
            subscriber.sendNext(1)
            subscriber.sendError(TestError("deep"))
            return nil
        }
        for _ in 0..<Self.depth { signal = signal.filter { _ in true } }
        let recorder = Recorder<Int>()
        signal.subscribe(recorder)
        #expect(recorder.events == [.next(1), .error(TestError("deep"))])
    }

    @Test func aDisposedDeepChainRunsTheSourcesCleanupOnce() {
        let cleanups = Box(0)
        var signal = Signal<Int> { subscriber in
            ActionDisposable {
                withExtendedLifetime(subscriber) {}  // a source that could still send
                cleanups.mutate { $0 += 1 }
            }
        }
        for _ in 0..<Self.depth { signal = signal.map { $0 } }
        let subscription = signal.subscribe(next: { _ in })
        #expect(cleanups.value == 0)
        subscription.dispose()
        subscription.dispose()
        #expect(cleanups.value == 1)
    }

    @Test func aDeepSubscriptionToANeverEndingSourceLivesUntilDisposed() {
        let baseline = liveSubscriptionsInThisTest
        var signal = Signal<Int>.never
        for _ in 0..<Self.depth { signal = signal.map { $0 } }
        let subscription = signal.subscribe(next: { _ in })
        // One relay per run of fused maps (`StageRun.maxLength` each) plus the caller's
        // subscriber, counted across every fresh stack.
        let runs = (Self.depth + Int(StageRun<Int>.maxLength) - 1) / Int(StageRun<Int>.maxLength)
        #expect(liveSubscriptionsInThisTest == baseline + runs + 1)
        subscription.dispose()
        #expect(liveSubscriptionsInThisTest == baseline)
    }

    @Test func aChainOf100kSubjectsForwardingToEachOtherDeliversAndReleases() {
        let baseline = liveSubscriptionsInThisTest
        do {
            let subjects = (0...Self.depth).map { _ in Subject<Int>() }
            for (from, to) in zip(subjects, subjects.dropFirst()) {
                from.subscribe(next: { to.sendNext($0 + 1) }, completed: { to.sendCompleted() })
            }
            let recorder = Recorder<Int>()
            subjects[Self.depth].subscribe(recorder)
            subjects[0].sendNext(0)
            subjects[0].sendCompleted()
            #expect(recorder.events == [.next(Self.depth), .completed])
        }
        #expect(liveSubscriptionsInThisTest == baseline)
    }

    @Test func aChainOf100kFlatMapsDelivers() {
        var signal = Signal.just(0)
        for _ in 0..<Self.depth { signal = signal.flatMap { Signal.just($0 + 1) } }
        let recorder = Recorder<Int>()
        signal.subscribe(recorder)
        #expect(recorder.events == [.next(Self.depth), .completed])
    }

    /// Operators that subscribe inside their own subscribe closure, 100,000 deep over a
    /// synchronous source: each links its inner subscription into its own before subscribing, so
    /// the chain of links reaches the source's relay before the source's loop starts, and a
    /// dispose from inside the loop stops it (and disposes every level) at once.
    @Test func aChainOf100kOperatorsThatSubscribeInsideTheirClosuresStopsASynchronousSourceAtDispose() {
        let baseline = liveSubscriptionsInThisTest
        do {
            let handle = CompoundDisposable()
            let pulled = Box(0)
            // A lifetime per level, as separate owners would have.
            var tokens: [Lifetime.Token] = []
            var signal = Signal.from(0..<100).map { value in
                if pulled.mutate({ count -> Int in count += 1; return count }) == 3 { handle.dispose() }
                return value
            }
            for level in 0..<Self.depth {
                switch level % 5 {
                case 0: signal = signal.onDispose {}
                case 1:
                    let (lifetime, token) = Lifetime.make()
                    tokens.append(token)
                    signal = signal.take(during: lifetime)
                case 2: signal = signal.onSubscribe {}
                case 3: signal = signal.catch { _ in Signal<Int>.empty }
                default: signal = signal.take(until: Signal<Int>.never)
                }
            }
            let recorder = Recorder<Int>()
            signal.subscribe(recorder, into: handle)
            #expect(pulled.value == 3, "the source pulled \(pulled.value) elements, disposed at the third")
            #expect(recorder.events == [.next(0), .next(1)])
            withExtendedLifetime(tokens) {}
        }
        #expect(liveSubscriptionsInThisTest == baseline)
    }

    @Test func aDeepChainRunsOnAThreadWithASmallStack() async {
        let result = Box<[Int]>([])
        await runOnThread(stackSize: 256 * 1024) {
            var signal = Signal.from([1, 2])
            for _ in 0..<Self.depth { signal = signal.map { $0 * 1 } }
            signal.subscribe(next: { value in result.mutate { $0.append(value) } })
        }
        #expect(result.value == [1, 2])
    }

    @Test func aFreshStackSeesTheCallersCurrentScheduler() {
        let scheduler = TestScheduler()
        let seen = Schedulers.run(as: scheduler) {
            StackGuard.onFreshStack { Schedulers.current }
        }
        #expect(seen as AnyObject === scheduler)
    }

    @Test func aFreshStackSchedulesOnTheCallersImmediateTrampoline() {
        let order = Box<[String]>([])
        ImmediateScheduler.shared.schedule {
            StackGuard.onFreshStack {
                ImmediateScheduler.shared.schedule { order.mutate { $0.append("nested") } }
            }
            order.mutate { $0.append("outer") }
        }
        // As on one thread: the nested action waits for the outer one to return.
        #expect(order.value == ["outer", "nested"])
    }

    @Test func theCheckPassesWithRoomAndFailsNearTheEndOfTheStack() async {
        #expect(StackGuard.hasRoom())
        let sawNoRoom = Box(false)
        await runOnThread(stackSize: 256 * 1024) {
            func descend(_ depth: Int) -> Int {
                if !StackGuard.hasRoom() {
                    sawNoRoom.value = true
                    return depth
                }
                var padding = (0, 0, 0, 0, 0, 0, 0, 0)  // ~64 bytes per frame
                return withUnsafeMutablePointer(to: &padding) { _ in descend(depth + 1) }
            }
            _ = descend(0)
        }
        #expect(sawNoRoom.value)
    }
}

extension DeepChainTests {
    /// ThreadSanitizer's per-thread shadow stack holds 65,536 calls and is not bound-checked;
    /// under it a chain may use only the top 768 KiB of a thread's stack (≤ 49,152 frames).
    @Test func chainsUseAtMostTheSanitizerBudgetUnderThreadSanitizerAndTheWholeStackOtherwise() async {
        let used = Box(0)
        await runOnThread(stackSize: 16 * 1024 * 1024) {
            var top: UInt8 = 0
            let start = withUnsafeMutablePointer(to: &top) { StackGuard.stackAddress(of: $0) }
            func descend() -> Int {
                var marker: UInt8 = 0
                let here = withUnsafeMutablePointer(to: &marker) { StackGuard.stackAddress(of: $0) }
                if !StackGuard.hasRoom() { return Int(start - here) }
                var padding = (0, 0, 0, 0, 0, 0, 0, 0)  // ~64 bytes per frame
                return withUnsafeMutablePointer(to: &padding) { _ in descend() }
            }
            used.value = descend()
        }
        if StackGuard.runsUnderThreadSanitizer {
            #expect(used.value <= StackGuard.threadSanitizerBudget)
            #expect(used.value >= StackGuard.threadSanitizerBudget / 2)
        } else {
            #expect(used.value >= 15 * 1024 * 1024)
        }
    }
}

/// Runs `body` on a new thread with `stackSize` bytes of stack and waits for it.
func runOnThread(stackSize: Int, _ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let thread = Thread {
            body()
            continuation.resume()
        }
        thread.stackSize = stackSize
        thread.start()
    }
}
