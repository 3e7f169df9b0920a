import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// Stage fusion (`StageRun`): consecutive `map`, `filter`, `compactMap` and `scan` compose into
/// one relay. What it must keep: each subscription's own state, the operators' values and
/// terminal events, disposal between stages, and deep chains.
@Suite(.leakChecked) struct StageFusionTests {
    /// The relay `Subscriber`s alive while a value is delivered through `stages` operators (over
    /// `from`, counted in a scope of their own) — one per run, plus the subscriber.
    static func subscribersWhileDelivering(stages: Int) -> Int {
        let scope = RippleDebug.Scope()
        var live: [Int] = []
        RippleDebug.counting(in: scope) {
            var signal = Signal.from([1])
            for stage in 0..<stages {
                switch stage % 4 {
                case 0: signal = signal.map { $0 }
                case 1: signal = signal.filter { _ in true }
                case 2: signal = signal.compactMap { $0 }
                default: signal = signal.scan(0) { $1 }
                }
            }
            signal.subscribeNext { _ in live.append(scope.liveSubscriptions) }
        }
        #expect(scope.liveSubscriptions == 0)
        return live.first ?? -1
    }

    @Test func consecutiveOperatorsOfTheFamilyShareOneRelayUpToEightStages() {
        #expect(Self.subscribersWhileDelivering(stages: 1) == 2)
        #expect(Self.subscribersWhileDelivering(stages: 8) == 2)
        #expect(Self.subscribersWhileDelivering(stages: 9) == 3)
        #expect(Self.subscribersWhileDelivering(stages: 16) == 3)
        #expect(Self.subscribersWhileDelivering(stages: 17) == 4)
    }

    @Test func aRunDeliversWhatTheOperatorsOneByOneWould() {
        let recorder = Recorder<String>()
        Signal.from(0..<20)
            .map { $0 * 3 }.filter { $0 % 2 == 0 }.scan(0, +).compactMap { $0 % 4 == 0 ? "\($0)" : nil }
            .subscribe(recorder)
        var expected: [String] = []
        var sum = 0
        for value in 0..<20 where (value * 3) % 2 == 0 {
            sum += value * 3
            if sum % 4 == 0 { expected.append("\(sum)") }
        }
        #expect(recorder.values == expected)
        #expect(recorder.isCompleted)
    }

    @Test func everySubscriptionOfARunKeepsItsOwnScanState() {
        let running = Signal.from([1, 2, 3]).map { $0 }.scan(0, +).filter { _ in true }
        let first = Recorder<Int>(), second = Recorder<Int>()
        running.subscribe(first)
        running.subscribe(second)
        #expect(first.values == [1, 3, 6])
        #expect(second.values == [1, 3, 6])
    }

    /// A run is a value: extending it makes a new signal and leaves the shorter one as it was.
    @Test func extendingARunTwiceLeavesTheSharedPrefixAlone() {
        let prefix = Signal.from([1, 2, 3]).map { $0 * 10 }
        let evens = prefix.filter { $0 % 20 == 0 }
        let plusOne = prefix.map { $0 + 1 }
        let a = Recorder<Int>(), b = Recorder<Int>(), c = Recorder<Int>()
        prefix.subscribe(a)
        evens.subscribe(b)
        plusOne.subscribe(c)
        #expect(a.values == [10, 20, 30])
        #expect(b.values == [20])
        #expect(c.values == [11, 21, 31])
    }

    /// A dispose from inside one stage's closure stops the value before the next stage's closure
    /// (as when every operator had a relay of its own, which checked its status) — on a subject,
    /// whose relay keeps its turn, and behind `from`, where the whole run is fused.
    @Test func disposingFromInsideAStageStopsTheValueBeforeTheNextStage() {
        let subject = Subject<Int>()
        var subscription: (any Disposable)?
        var predicateSaw: [Int] = []
        var delivered: [Int] = []
        subscription = subject
            .map { value -> Int in
                if value == 3 { subscription?.dispose() }
                return value
            }
            .filter { predicateSaw.append($0); return true }
            .subscribeNext { delivered.append($0) }
        for value in 1...5 { subject.sendNext(value) }
        #expect(predicateSaw == [1, 2])
        #expect(delivered == [1, 2])
        #expect(subject.storage.subscriberCount == 0)
        subscription = nil
    }

    /// Behind `from` the whole run is fused (no turn anywhere): the check between stages still
    /// stops the value, and the loop stops at once. (The subscription's compound is made first,
    /// as `lift` makes it, so the stage can dispose it while `from` runs.)
    @Test func disposingFromInsideAStageBehindFromStopsTheValueAndTheLoop() {
        let subscription = CompoundDisposable()
        var mapped: [Int] = []
        var predicateSaw: [Int] = []
        var delivered: [Int] = []
        let pipeline = Signal.from(1...1_000_000)
            .map { value -> Int in
                mapped.append(value)
                if value == 3 { subscription.dispose() }
                return value
            }
            .filter { predicateSaw.append($0); return true }
        pipeline.subscribe(exclusively: Subscriber(next: { delivered.append($0) }), into: subscription)
        #expect(mapped.count == 3)
        #expect(predicateSaw == [1, 2])
        #expect(delivered == [1, 2])
    }

    @Test func anErrorAndACompletionPassThroughARunOnceAndEndTheSource() {
        var cleanups = 0
        let failing = Signal<Int> { subscriber in
            subscriber.sendNext(1)
            subscriber.sendError(TestError())
            subscriber.sendCompleted()
            return ActionDisposable { cleanups += 1 }
        }
        var events: [String] = []
        failing.map { $0 + 1 }.filter { _ in true }.scan(0, +)
            .subscribe(next: { events.append("\($0)") }, error: { _ in events.append("error") },
                       completed: { events.append("completed") })
        #expect(events == ["2", "error"])
        #expect(cleanups == 1)
    }

    @Test func aRunOnASubjectQueuesASendFromItsCallbackUntilItReturns() {
        let subject = Subject<Int>()
        var seen: [Int] = []
        let subscription = subject.map { $0 * 2 }.filter { _ in true }.subscribeNext { value in
            seen.append(value)
            if value == 2 { subject.sendNext(5) }
            seen.append(-value)
        }
        subject.sendNext(1)
        #expect(seen == [2, -2, 10, -10])
        subscription.dispose()
        #expect(subject.storage.subscriberCount == 0)
    }

    /// A run's relay stands for the run's levels: it checks the stack when one of them is a
    /// multiple of the stride, so runs of 8 on a deep chain still check every 32 levels.
    @Test func aRelayChecksTheStackWhenOneOfItsLevelsIsAMultipleOfTheStride() {
        func checks(depth: UInt32, levels: UInt32) -> Bool {
            let subscriber = Subscriber<Int>(relayDepth: depth, levels: levels, next: nil, error: nil, completed: nil)
            subscriber.upstreamSerializes = true
            return subscriber.checksStack
        }
        #expect(!checks(depth: 0, levels: 0))
        #expect(checks(depth: 32, levels: 1))
        #expect(!checks(depth: 31, levels: 1))
        #expect(!checks(depth: 33, levels: 1))
        #expect(checks(depth: 35, levels: 8))   // 28...35
        #expect(checks(depth: 39, levels: 8))   // 32...39
        #expect(!checks(depth: 40, levels: 8))  // 33...40
        #expect(checks(depth: 64, levels: 8))
    }

    @Test func aChainOf100kMixedFusedOperatorsDeliversOnASmallStackAndReleases() async {
        let depth = Workload.size(100_000)
        let result = Box<[Int]>([])
        let completed = Box(false)
        await runOnThread(stackSize: 256 * 1024) {
            var signal = Signal.from([1, 2])
            for stage in 0..<depth {
                switch stage % 3 {
                case 0: signal = signal.map { $0 }
                case 1: signal = signal.filter { _ in true }
                default: signal = signal.compactMap { $0 }
                }
            }
            signal.subscribe(next: { value in result.mutate { $0.append(value) } },
                             completed: { completed.mutate { $0 = true } })
        }
        #expect(result.value == [1, 2])
        #expect(completed.value)
    }
}

extension StageFusionTests {
    /// Edge cases of stage fusion: senders on several threads, disposal between runs, a
    /// resubscription from inside a stage, and deep chains on small stacks. Off the cooperative
    /// pool: these tests block the thread they run on.
    @Suite(.offThePool) struct EdgeCases {
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
        /// (`aRelayChecksTheStackWhenOneOfItsLevelsIsAMultipleOfTheStride` checks the arithmetic on a
        /// hand-made `Subscriber`; this checks that `Signal(stageRun:)` passes the run's length, not 1.)
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
}

/// A subscription reads the current `RippleDebug` scope only once some `Scope` was made. A scope
/// made on one thread and made current on another thread, or inherited by a child task, still
/// counts what is created there.
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
