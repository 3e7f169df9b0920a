import Testing
@testable import Ripple
import RippleTestSupport
import RippleTesting

/// `throttle(_:latest:on:)`, `timeout(_:on:switchingTo:)`, `buffer(timeSpan:count:on:)` and
/// `sample(_:default:)`.
@Suite(.leakChecked) struct TimeWindowTests {
    @Test func throttleWithoutLatestSendsTheFirstValueOfEachWindowAndDropsTheRest() {
        let clock = TestScheduler()
        let first = clock.record(clock.hot("-a-b-c------d---|").throttle(.milliseconds(30), latest: false, on: clock))
        let latest = clock.record(clock.hot("-a-b-c------d---|").throttle(.milliseconds(30), latest: true, on: clock))
        clock.run()
        #expect(first.events == "-a---c------d---|")
        #expect(latest.events == "-a--b--c----d---|", "latest: true is throttle(_:on:)")
    }

    @Test func throttleWithoutLatestCompletesAtOnceAndForwardsErrors() {
        let clock = TestScheduler()
        let completing = clock.record(clock.hot("-ab|").throttle(.milliseconds(50), latest: false, on: clock))
        let failing = clock.record(clock.hot("-ab#").throttle(.milliseconds(50), latest: false, on: clock))
        clock.run(until: .milliseconds(40))
        #expect(completing.events == "-a-|")
        #expect(failing.events == "-a-#")
        #expect(clock.nextDueTime == nil, "the windows' timers were cancelled when the streams ended")
    }

    @Test func throttleWithoutLatestDisposedDuringAWindowLeavesNothingScheduled() {
        let clock = TestScheduler()
        let source = Subject<Int>()
        let r = Recorder<Int>()
        let d = source.throttle(.milliseconds(50), latest: false, on: clock).subscribe(r)
        source.sendNext(1)
        source.sendNext(2)
        d.dispose()
        #expect(clock.livePendingCount == 0)
        #expect(r.events == [.next(1)])
    }

    @Test func timeoutSwitchesToTheFallbackWhenTheTimeRunsOut() {
        let clock = TestScheduler()
        let source = clock.hot("-1-2-----3|")
        let fallback = clock.cold("-9|")
        let r = clock.record(source.timeout(.milliseconds(50), on: clock, switchingTo: fallback))
        clock.run()
        #expect(r.events == "-1-2--9|")
        #expect(source.subscriptions == ["^----!"])
        #expect(fallback.subscriptions == ["-----^-!"])
    }

    @Test func timeoutWithAFallbackForwardsTheSourcesEndAndNeverSubscribesTheFallback() {
        let clock = TestScheduler()
        let fallback = clock.cold("-9|")
        let completing = clock.record(clock.hot("-1|").timeout(.milliseconds(50), on: clock, switchingTo: fallback))
        let failing = clock.record(clock.hot("-1-#").timeout(.milliseconds(50), on: clock, switchingTo: fallback))
        clock.run(until: .milliseconds(40))
        #expect(completing.events == "-1|")
        #expect(failing.events == "-1-#")
        #expect(clock.nextDueTime == nil, "the timers were cancelled when the sources ended")
        clock.run()
        #expect(fallback.subscriptions.isEmpty)
    }

    @Test func timeoutWithAFallbackForwardsTheFallbacksError() {
        let clock = TestScheduler()
        let r = clock.record(clock.hot("-1------").timeout(.milliseconds(30), on: clock, switchingTo: clock.cold("-#")))
        clock.run()
        #expect(r.events == "-1--#")
    }

    @Test func timeoutWithAFallbackDisposedLeavesNothingScheduledOrSubscribed() {
        let clock = TestScheduler()
        let source = Subject<Int>()
        let waiting = source.timeout(.milliseconds(50), on: clock, switchingTo: Signal<Int>.never).subscribe(Recorder<Int>())
        waiting.dispose()
        #expect(clock.livePendingCount == 0)
        #expect(source.storage.subscriberCount == 0)
        let fallback = Subject<Int>()
        let r = Recorder<Int>()
        let switched = source.timeout(.milliseconds(50), on: clock, switchingTo: fallback).subscribe(r)
        clock.advance(by: .milliseconds(50))
        #expect(source.storage.subscriberCount == 0, "the source was disposed at the switch")
        fallback.sendNext(7)
        switched.dispose()
        fallback.sendNext(8)
        #expect(r.events == [.next(7)])
        #expect(fallback.storage.subscriberCount == 0)
        #expect(clock.livePendingCount == 0)
    }

    @Test func bufferTimeSpanCountSendsAFullWindowAtOnceAndRestartsTheTimeSpan() {
        let clock = TestScheduler()
        let source = clock.hot("-1-23------4---|")
        let r = clock.record(source.buffer(timeSpan: .milliseconds(50), count: 3, on: clock))
        clock.run()
        #expect(r.events == [.next(40, ["1", "2", "3"]), .next(140, ["4"]), .completed(150)])
        #expect(clock.nextDueTime == nil)
    }

    @Test func bufferTimeSpanCountSendsEachWindowAtItsEndWhenItIsNotFull() {
        let clock = TestScheduler()
        let r = clock.record(clock.hot("-1-2-----3---------|").buffer(timeSpan: .milliseconds(50), count: 5, on: clock))
        clock.run()
        #expect(r.events == [.next(50, ["1", "2"]), .next(100, ["3"]), .completed(190)], "empty windows send nothing")
    }

    @Test func bufferTimeSpanCountSendsWhatWaitsOnCompletionAndDropsItOnError() {
        let clock = TestScheduler()
        let completing = clock.record(clock.hot("-1-2|").buffer(timeSpan: .milliseconds(50), count: 3, on: clock))
        let failing = clock.record(clock.hot("-1-2#").buffer(timeSpan: .milliseconds(50), count: 3, on: clock))
        clock.run()
        #expect(completing.events == [.next(40, ["1", "2"]), .completed(40)])
        #expect(failing.events == [.error(40, MarbleError())])
        #expect(clock.livePendingCount == 0)
    }

    @Test func bufferTimeSpanCountDisposedLeavesNothingScheduled() {
        let clock = TestScheduler()
        let source = Subject<Int>()
        let r = Recorder<[Int]>()
        let d = source.buffer(timeSpan: .milliseconds(50), count: 2, on: clock).subscribe(r)
        source.sendNext(1)
        source.sendNext(2)
        source.sendNext(3)
        clock.advance(by: .milliseconds(20))
        d.dispose()
        #expect(clock.livePendingCount == 0)
        #expect(source.storage.subscriberCount == 0)
        #expect(r.events == [.next([1, 2])])
    }

    /// The window that filled by count still has its timer scheduled while its array is
    /// delivered: a dispose from inside that delivery cancels it there and then.
    @Test func bufferTimeSpanCountDisposedWhileDeliveringAFullWindowLeavesNothingScheduled() {
        let clock = TestScheduler()
        let source = Subject<Int>()
        let subscription = SerialDisposable()
        let pendingAfterDispose = Box<Int?>(nil)
        let arrays = Box<[[Int]]>([])
        subscription.disposable = source.buffer(timeSpan: .milliseconds(50), count: 2, on: clock).subscribeNext { array in
            arrays.mutate { $0.append(array) }
            subscription.dispose()
            pendingAfterDispose.value = clock.livePendingCount
        }
        source.sendNext(1)
        source.sendNext(2)
        #expect(pendingAfterDispose.value == 0, "the full window's timer was cancelled by the dispose")
        #expect(clock.livePendingCount == 0, "no next window was opened")
        #expect(source.storage.subscriberCount == 0)
        source.sendNext(3)
        clock.run()
        #expect(arrays.value == [[1, 2]])
    }

    @Test func bufferTimeSpanCountTakesAValueSentBackFromItsSubscriberIntoTheNextWindow() {
        let clock = TestScheduler()
        let source = Subject<Int>()
        var arrays: [[Int]] = []
        let d = source.buffer(timeSpan: .milliseconds(50), count: 2, on: clock).subscribeNext { array in
            arrays.append(array)
            if array == [1, 2] { source.sendNext(3) }
        }
        source.sendNext(1)
        source.sendNext(2)
        source.sendNext(4)
        #expect(arrays == [[1, 2], [3, 4]])
        d.dispose()
    }

    @Test func sampleWithADefaultSendsItForTicksBeforeTheFirstValue() {
        let clock = TestScheduler()
        let source = clock.hot("---1---2---|")
        let sampler = clock.hot("-x---x---x-|")
        let r = clock.record(source.sample(sampler, default: "0"))
        let plain = clock.record(source.sample(sampler))
        clock.run()
        #expect(r.events == "-0---1---2-|")
        #expect(plain.events == "-----1---2-|")
    }

    @Test func sampleWithADefaultForwardsErrorsOfEither() {
        let clock = TestScheduler()
        let samplerFailing = clock.record(clock.hot("-----").sample(clock.hot("-x-#"), default: "0"))
        let sourceFailing = clock.record(clock.hot("--1-#").sample(clock.hot("-x-x---x"), default: "0"))
        clock.run()
        #expect(samplerFailing.events == "-0-#")
        #expect(sourceFailing.events == "-0-1#")
    }
}
