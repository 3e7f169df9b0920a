import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// Edge cases of stage fusion (`StageRun`): shapes `StageFusionTests` does not cover.
@Suite(.leakChecked, .offThePool) struct StageFusionEdgeCaseTests {
    static let depth = Workload.size(100_000)

    /// `scan`'s per-subscription state behind a subject sent to from four threads at once: the
    /// run's relay keeps its turn, so the accumulator sees one value at a time.
    @Test func aRunOnASubjectSentToFromFourThreadsCountsEveryValueOnce() async {
        let subject = Subject<Int>()
        let seen = Box<[Int]>([])
        let subscription = subject.map { _ in 1 }.filter { _ in true }.scan(0, +)
            .subscribeNext { value in seen.mutate { $0.append(value) } }
        let perThread = 5_000
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask { for value in 0..<perThread { subject.sendNext(value) } }
            }
        }
        #expect(seen.value == Array(1...(4 * perThread)))
        subscription.dispose()
    }

    /// The same behind a user `Signal { }` whose producer sends from several threads.
    @Test func aRunOnAUserSignalSendingFromFourThreadsCountsEveryValueOnce() {
        let perThread = 5_000
        let source = Signal<Int> { subscriber in
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                for value in 0..<perThread { subscriber.sendNext(value) }
            }
            subscriber.sendCompleted()
            return nil
        }
        let recorder = Recorder<Int>()
        source.map { _ in 1 }.scan(0, +).compactMap { $0 }.subscribe(recorder)
        #expect(recorder.values == Array(1...(4 * perThread)))
        #expect(recorder.isCompleted)
    }

    /// A dispose from the first stage of the first of two runs stops the value before every
    /// later stage, in both runs, behind a subject and behind `from`.
    @Test func disposingInTheFirstRunStopsTheValueBeforeTheSecondRun() {
        for useSubject in [true, false] {
            let subject = Subject<Int>()
            let source: Signal<Int> = useSubject ? subject.asSignal() : Signal.from(1...5)
            let calls = Box<[String]>([])
            let holder = Box<(any Disposable)?>(nil)
            let trigger = CompoundDisposable()
            var signal = source.map { value -> Int in
                calls.mutate { $0.append("s0:\(value)") }
                if value == 3 { trigger.dispose() }
                return value
            }
            for stage in 1..<12 {
                signal = signal.map { value in calls.mutate { $0.append("s\(stage):\(value)") }; return value }
            }
            let delivered = Box<[Int]>([])
            // The subscription's compound is `trigger` itself (made first, as `lift` makes it),
            // so the stage can dispose it while `from` runs.
            signal.subscribe(exclusively: Subscriber(next: { value in delivered.mutate { $0.append(value) } }),
                             into: trigger)
            holder.value = trigger
            if useSubject { for value in 1...5 { subject.sendNext(value) } }
            #expect(delivered.value == [1, 2], "subject: \(useSubject)")
            #expect(!calls.value.contains { $0.hasSuffix(":3") && $0 != "s0:3" }, "subject: \(useSubject)")
            #expect(!calls.value.contains { $0.hasSuffix(":4") }, "subject: \(useSubject)")
            holder.value = nil
        }
    }

    /// A stage that subscribes to its own pipeline again gets a subscription of its own.
    @Test func subscribingAgainFromInsideAStageGetsItsOwnState() {
        let inner = Box<[Int]>([])
        let outer = Box<[Int]>([])
        let pipelineBox = Box<Signal<Int>?>(nil)
        let pipeline = Signal.from([1, 2, 3]).scan(0, +).map { value -> Int in
            // Taken out of the box: only the outer subscription subscribes again.
            if value == 1, let again = pipelineBox.mutate({ box in defer { box = nil }; return box }) {
                again.subscribeNext { v in inner.mutate { $0.append(v) } }
            }
            return value
        }
        pipelineBox.value = pipeline
        pipeline.subscribeNext { v in outer.mutate { $0.append(v) } }
        #expect(outer.value == [1, 3, 6])
        #expect(inner.value == [1, 3, 6])
    }

    /// 100,000 mixed operators of the family (with `scan`) on a 256 KiB stack: delivered,
    /// completed, and every subscription released — counted in a scope current on that thread
    /// (the suite's `.leakChecked` scope is a task-local a raw `Thread` does not inherit).
    @Test func aChainOf100kMixedOperatorsWithScanDeliversAndReleasesOnASmallStack() async {
        let depth = Self.depth
        let result = Box<[Int]>([])
        let completed = Box(false)
        let live = Box(-1)
        let liveAfter = Box(-1)
        await runOnThread(stackSize: 256 * 1024) {
            let scope = RippleDebug.Scope()
            RippleDebug.counting(in: scope) {
                var signal = Signal.from([1, 2])
                for stage in 0..<depth {
                    switch stage % 4 {
                    case 0: signal = signal.map { $0 }
                    case 1: signal = signal.filter { _ in true }
                    case 2: signal = signal.compactMap { $0 }
                    default: signal = signal.scan(0) { $1 }
                    }
                }
                signal.subscribe(next: { value in result.mutate { $0.append(value) } },
                                 completed: { completed.mutate { $0 = true } })
                live.value = scope.liveSubscriptions
            }
            liveAfter.value = scope.liveSubscriptions
        }
        #expect(result.value == [1, 2])
        #expect(completed.value)
        #expect(live.value == 0)
        #expect(liveAfter.value == 0)
    }

    /// Why `StageFusionTests.aChainOf100kMixedFusedOperatorsDeliversOnASmallStackAndReleases`
    /// checks no release: its chain lives on a raw `Thread`, where the `.leakChecked` scope (a
    /// task-local of the test's task) is not current, so its subscriptions count nowhere.
    @Test func theLeakCheckScopeIsNotCurrentOnARawThread() async {
        let seen = Box(true)
        await runOnThread(stackSize: 1 << 20) { seen.value = RippleDebug.currentScope != nil }
        #expect(RippleDebug.currentScope != nil)
        #expect(!seen.value)
    }

    /// Runs of 7 separated by one `lift` operator, so a run's levels cross the stride at every
    /// offset; over a subject (the first relay keeps its turn), on a 256 KiB stack, then disposed.
    @Test func runsOfSevenBetweenLiftOperatorsDeliverOnASmallStack() async {
        let depth = Self.depth
        let result = Box<[Int]>([])
        let liveAfter = Box(-1)
        await runOnThread(stackSize: 256 * 1024) {
            let scope = RippleDebug.Scope()
            RippleDebug.counting(in: scope) {
                let subject = Subject<Int>()
                var signal = subject.asSignal()
                for stage in 0..<depth {
                    if stage % 8 == 7 { signal = signal.onNext { _ in } } else { signal = signal.map { $0 + 1 } }
                }
                let subscription = signal.subscribeNext { value in result.mutate { $0.append(value) } }
                subject.sendNext(0)
                subscription.dispose()
                subject.sendNext(1)
            }
            liveAfter.value = scope.liveSubscriptions
        }
        #expect(result.value == [Self.depth - Self.depth / 8])
        #expect(liveAfter.value == 0)
    }

    /// A chain built and dropped without a subscription, on a small stack.
    @Test func anUnsubscribed100kChainReleasesOnASmallStack() async {
        let depth = Self.depth
        let released = Box(false)
        await runOnThread(stackSize: 256 * 1024) {
            weak var weakHead: Signal<Int>?
            do {
                var signal = Signal.from([1])
                for stage in 0..<depth { signal = stage % 2 == 0 ? signal.map { $0 } : signal.scan(0, +) }
                weakHead = signal
            }
            released.value = weakHead == nil
        }
        #expect(released.value)
    }

    /// A run's relay stands for the run's levels: its `relayDepth` is the downstream's plus the
    /// run's length, and it checks the stack when those levels cross a multiple of the stride.
    /// (`StageFusionTests` checks the arithmetic on a hand-made `Subscriber` only: passing 1
    /// instead of the run's length from `Signal(stageRun:)` failed no test.)
    @Test func aRunsRelayIsAsDeepAsItsStagesBelowIt() {
        func headRelay(maps: Int) -> (depth: UInt32, checks: Bool) {
            var seen: (UInt32, Bool) = (0, false)
            var signal = Signal<Int> { subscriber in
                seen = (subscriber.relayDepth, subscriber.direct?.checksStackWhenFused ?? false)
                return nil
            }
            for _ in 0..<maps { signal = signal.map { $0 } }
            signal.subscribeNext { _ in }.dispose()
            return seen
        }
        #expect(headRelay(maps: 3).depth == 3)
        #expect(headRelay(maps: 8).depth == 8)
        #expect(headRelay(maps: 12).depth == 12)   // the source's run of 8, at levels 5...12
        #expect(headRelay(maps: 31).checks == false)   // levels 24...31
        #expect(headRelay(maps: 33).checks == true)    // levels 26...33
    }
}


/// A subscription reads the current `RippleDebug` scope only once some `Scope` was made. A scope made on one thread and made current on another thread, or inherited by a child
/// task, still counts what is created there.
@Suite struct RippleDebugScopeTests {
    @Test func aScopeMadeOnOneThreadCountsOnAnotherAndInAChildTask() async {
        let scope = RippleDebug.Scope()
        let subject = Subject<Int>()
        let onThread = Box(-1)
        await runOnThread(stackSize: 1 << 20) {
            RippleDebug.counting(in: scope) {
                let subscription = subject.map { $0 }.subscribeNext { _ in }
                onThread.value = scope.liveSubscriptions
                subscription.dispose()
            }
        }
        #expect(onThread.value == 3)  // the subject subscription, the run's relay, the subscriber
        let inChild = await RippleDebug.counting(in: scope) {
            await Task {
                let subscription = subject.subscribeNext { _ in }
                defer { subscription.dispose() }
                return scope.liveSubscriptions
            }.value
        }
        #expect(inChild == 1)
        #expect(scope.liveSubscriptions == 0)
    }
}
