import Foundation
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
