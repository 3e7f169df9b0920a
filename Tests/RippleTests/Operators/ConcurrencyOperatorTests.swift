import Foundation
import Testing
@testable import Ripple
import RippleTestSupport
import RippleTesting

@Suite(.leakChecked) struct BoundedFlatMapTests {
    @Test func atMostNInnerSignalsRunAndTheRestWaitInOrder() {
        let clock = TestScheduler()
        let outer = clock.hot("-a-b-c-----|")
        let inners = ["a": clock.cold("-1---2|"), "b": clock.cold("-3---4|"), "c": clock.cold("-5-6|")]
        let r = clock.record(outer.flatMap(maxConcurrent: 2) { inners[$0]! })
        clock.run()
        #expect(r.events == "--1-3-2-(45)-6|")
        #expect(inners["a"]!.subscriptions == ["-^-----!"])
        #expect(inners["b"]!.subscriptions == ["---^-----!"])
        #expect(inners["c"]!.subscriptions == ["-------^---!"], "c waits for a place, which a's completion at 70 ms frees")
    }

    @Test func theResultCompletesWhenTheSourceAndEveryQueuedInnerSignalHaveCompleted() {
        let clock = TestScheduler()
        let outer = clock.hot("-ab|")
        let r = clock.record(outer.flatMap(maxConcurrent: 1) { letter in clock.cold("--\(letter)|") })
        clock.run()
        #expect(r.events == "---a--b|")
    }

    @Test func anInnerErrorFailsTheResultAtOnceAndDisposesRunningAndQueuedInners() {
        let clock = TestScheduler()
        let outer = clock.hot("-abc-----|")
        let inners = ["a": clock.cold("-1-#"), "b": clock.cold("-2------|"), "c": clock.cold("-3|")]
        let r = clock.record(outer.flatMap(maxConcurrent: 2) { inners[$0]! })
        clock.run()
        #expect(r.events == "--12#")
        #expect(outer.subscriptions == ["^---!"])
        #expect(inners["b"]!.subscriptions == ["--^-!"])
        #expect(inners["c"]!.subscriptions.isEmpty, "the queued inner signal is dropped, never subscribed")
    }

    @Test func anUpstreamErrorFailsTheResultAndDisposesTheInners() {
        let clock = TestScheduler()
        let inner = clock.cold("-1-----|")
        let r = clock.record(clock.hot("-a--#").flatMap(maxConcurrent: 1) { _ in inner })
        clock.run()
        #expect(r.events == "--1-#")
        #expect(inner.subscriptions == ["-^--!"])
    }

    @Test func disposingTheResultCancelsQueuedAndRunningInnersAndLeavesNothingScheduled() {
        let clock = TestScheduler()
        let outer = Subject<String>()
        let inners = ["a": clock.cold("-1----|"), "b": clock.cold("-2|")]
        let r = clock.record(outer.flatMap(maxConcurrent: 1) { inners[$0]! })
        outer.sendNext("a")
        outer.sendNext("b")
        clock.advance(to: .milliseconds(30))
        r.dispose()
        #expect(clock.nextDueTime == nil, "the running inner signal's events were unscheduled")
        clock.run()
        #expect(r.events == "-1")
        #expect(inners["a"]!.subscriptions == ["^--!"])
        #expect(inners["b"]!.subscriptions.isEmpty)
        #expect(outer.storage.subscriberCount == 0)
    }

    @Test func mergeMaxConcurrentOneRunsTheInnerSignalsOneAfterAnother() {
        let clock = TestScheduler()
        let a = clock.cold("-1-2|"), b = clock.cold("-3|")
        let r = clock.record(Signal<ColdTestSignal<String>>.from([a, b]).merge(maxConcurrent: 1))
        clock.run()
        #expect(r.events == "-1-2-3|")
        #expect(b.subscriptions == ["----^-!"])
    }

    @Test func aValueSentBackIntoTheSourceFromACallbackWaitsForItsPlace() {
        let clock = TestScheduler()
        let outer = Subject<Int>()
        let inners = [1: clock.cold("-a-b|"), 2: clock.cold("-c|")]
        var seen: [String] = []
        let d = outer.flatMap(maxConcurrent: 1) { inners[$0]! }.subscribe(next: { value in
            seen.append(value)
            if value == "a" { outer.sendNext(2) }  // re-entrant, while 1's inner signal runs
        })
        outer.sendNext(1)
        clock.run()
        #expect(seen == ["a", "b", "c"])
        #expect(inners[1]!.subscriptions == ["^---!"])
        #expect(inners[2]!.subscriptions == ["----^-!"], "2 is subscribed when 1 completes, at 40 ms, not when it arrived")
        d.dispose()
    }

    @Test func innerSignalsThatCompleteAtOnceRunInConstantStack() {
        let count = Workload.size(50_000)
        var first: StackSpot?, last: StackSpot?
        let r = Recorder<Int>()
        Signal.from(0..<count).flatMap(maxConcurrent: 3) { value in
            Signal<Int> { s in
                if value == 0 { first = .here() }
                if value == count - 1 { last = .here() }
                s.sendNext(value)
                s.sendCompleted()
                return nil
            }
        }.subscribe(r)
        #expect(r.values.count == count)
        #expect(r.isCompleted)
        first?.expectSameThreadAndDepth(as: last, "inner signal \(count) against the first")
    }

    @Test func aLimitBelowOneStopsWithAMessage() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Signal.just(1).flatMap(maxConcurrent: 0) { Signal.just($0) }
        }.map { result in
            let message = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(message.contains("flatMap(maxConcurrent:) needs a limit of 1 or more, got 0"))
        }
    }
}

@Suite struct BoundedMergeStateTests {
    /// The looper's steps until the loop ends, as text: `a` (subscribe a), `|` (complete), `.` (stop).
    static func loop(_ state: inout BoundedMergeState<String>) -> String {
        guard state.startLoop() else { return "busy" }
        var steps = ""
        while true {
            switch state.nextStep() {
            case .subscribe(let inner): steps += inner
            case .complete: return steps + "|"
            case .stop: return steps + "."
            }
        }
    }

    @Test func itHandsOutInnerSignalsInArrivalOrderAndNeverMoreThanTheLimit() {
        var state = BoundedMergeState<String>(limit: 2)
        for name in ["a", "b", "c"] {
            let accepted = state.enqueue(name)
            #expect(accepted)
        }
        #expect(Self.loop(&state) == "ab.", "c waits: the limit is reached")
        #expect(!state.isLooping)
        state.innerCompleted()
        #expect(Self.loop(&state) == "c.", "c starts once a place is free")
    }

    @Test func aSecondThreadLeavesTheWorkToTheLooper() {
        var state = BoundedMergeState<String>(limit: 1)
        let first = state.startLoop()
        let second = state.startLoop()
        #expect(first && !second)
        _ = state.enqueue("a")  // another thread's change while the first loops: seen at its next step
        guard case .subscribe("a") = state.nextStep() else {
            Issue.record("the looper hands out what arrived while it looped")
            return
        }
    }

    @Test func itCompletesOnceWhenUpstreamAndEveryInnerSignalHaveCompleted() {
        var state = BoundedMergeState<String>(limit: 1)
        _ = state.enqueue("a")
        state.outerCompleted()
        #expect(Self.loop(&state) == "a.", "a still runs")
        state.innerCompleted()
        #expect(Self.loop(&state) == "|")
        #expect(state.isFinished)
        #expect(Self.loop(&state) == ".", "completion is decided once")
    }

    @Test func endingHandsBackTheQueueAndRefusesMore() {
        var state = BoundedMergeState<String>(limit: 1)
        _ = state.enqueue("a")
        _ = state.enqueue("b")
        let (isFirst, dropped) = state.fail()
        #expect(isFirst)
        #expect(dropped.compactMap { $0 } == ["a", "b"])
        let again = state.fail().isFirst
        let accepted = state.enqueue("c")
        #expect(!again && !accepted)
    }
}

@Suite(.leakChecked) struct FlatMapFirstTests {
    @Test func valuesArrivingWhileAnInnerSignalRunsAreIgnored() {
        let clock = TestScheduler()
        var started: [String] = []
        let r = clock.record(clock.hot("-a-b---c-d---|").flatMapFirst { letter in
            started.append(letter)
            return clock.cold("-\(letter)-\(letter)|")
        })
        clock.run()
        #expect(r.events == "--a-a---c-c--|")
        #expect(started == ["a", "c"], "the transform runs only for values that start an inner signal")
    }

    @Test func theResultCompletesAfterTheRunningInnerSignal() {
        let clock = TestScheduler()
        let r = clock.record(clock.hot("-a|").flatMapFirst { _ in clock.cold("--x--|") })
        clock.run()
        #expect(r.events == "---x--|")
    }

    @Test func anInnerErrorFailsTheResultAndDisposesUpstream() {
        let clock = TestScheduler()
        let outer = clock.hot("-a---b--|")
        let r = clock.record(outer.flatMapFirst { _ in clock.cold("-1#") })
        clock.run()
        #expect(r.events == "--1#")
        #expect(outer.subscriptions == ["^--!"])
    }

    @Test func disposingTheResultDisposesTheRunningInnerSignal() {
        let clock = TestScheduler()
        let inner = clock.cold("-1---2|")
        let r = clock.record(clock.hot("-a").flatMapFirst { _ in inner })
        clock.advance(to: .milliseconds(30))
        r.dispose()
        #expect(clock.nextDueTime == nil)
        #expect(r.events == "--1")
        #expect(inner.subscriptions == ["-^-!"])
    }

    @Test func anInnerSignalThatCompletesAtOnceLetsTheNextValueThrough() {
        let r = Recorder<Int>()
        Signal.from([1, 2, 3]).flatMapFirst { Signal.just($0 * 10) }.subscribe(r)
        #expect(r.events == [.next(10), .next(20), .next(30), .completed])
    }
}

@Suite struct FlatMapFirstStateTests {
    @Test func itAdmitsAValueOnlyWhileNoInnerSignalRuns() {
        var state = FlatMapFirstState()
        let first = state.admit()
        let during = state.admit()
        let completes = state.innerCompleted()
        let next = state.admit()
        #expect(first, "nothing runs: the value starts an inner signal")
        #expect(!during, "one runs: ignored")
        #expect(!completes, "upstream has not completed")
        #expect(next, "the place is free again")
    }

    @Test func itCompletesOnceUpstreamAndTheRunningInnerSignalHaveCompleted() {
        var state = FlatMapFirstState()
        _ = state.admit()
        let atOuter = state.outerCompleted()
        let atInner = state.innerCompleted()
        let again = state.outerCompleted()
        #expect(!atOuter, "the inner signal still runs")
        #expect(atInner)
        #expect(state.isFinished)
        #expect(!again, "completion is decided once")
    }

    @Test func upstreamCompletingWhileNothingRunsCompletesAtOnce() {
        var state = FlatMapFirstState()
        let completes = state.outerCompleted()
        #expect(completes)
        let admitted = state.admit()
        #expect(!admitted)
    }

    @Test func theFirstErrorEndsItAndNothingIsAdmittedOrCompletedAfter() {
        var state = FlatMapFirstState()
        _ = state.admit()
        let first = state.fail()
        let second = state.fail()
        let admitted = state.admit()
        let completes = state.innerCompleted()
        let outer = state.outerCompleted()
        #expect(first && !second)
        #expect(!admitted && !completes && !outer)
    }
}

@Suite(.leakChecked) struct DeferredTests {
    @Test func theClosureRunsAtEachSubscribe() {
        var made = 0
        let signal = Signal<Int>.deferred {
            made += 1
            return Signal.just(made)
        }
        #expect(made == 0, "building the signal runs nothing")
        let first = Recorder<Int>(), second = Recorder<Int>()
        signal.subscribe(first)
        signal.subscribe(second)
        #expect(first.events == [.next(1), .completed])
        #expect(second.events == [.next(2), .completed])
    }

    @Test func endingTheSubscriptionStopsASynchronousMadeSignalAtOnce() {
        var produced = 0
        let r = Recorder<Int>()
        Signal<Int>.deferred { Signal.from(0..<1_000_000).onNext { _ in produced += 1 } }.take(3).subscribe(r)
        #expect(r.events == [.next(0), .next(1), .next(2), .completed])
        #expect(produced == 3)
    }

    @Test func theMadeSignalsEventsAndSubscriptionPassThrough() {
        let clock = TestScheduler()
        let made = clock.cold("-1-#")
        let r = clock.record(Signal.deferred { made })
        clock.run()
        #expect(r.events == "-1-#")
        #expect(made.subscriptions == ["^--!"])
    }
}
