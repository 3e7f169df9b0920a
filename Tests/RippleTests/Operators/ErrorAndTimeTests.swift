import Testing
@testable import Ripple
import RippleTestSupport

@Suite(.leakChecked) struct ErrorOperatorTests {
    @Test func catchSwitchesToTheHandlersSignal() {
        let r = Recorder<Int>()
        var caught: [String] = []
        Signal<Int> { s in s.sendNext(1); s.sendError(TestError("x")); return nil }
            .catch { error in caught.append("\(error)"); return Signal.from([8, 9]) }
            .subscribe(r)
        #expect(r.events == [.next(1), .next(8), .next(9), .completed])
        #expect(caught == ["x"])
    }

    @Test func catchPassesCompletionThrough() {
        let r = Recorder<Int>()
        Signal.just(1).catchTo(Signal.just(9)).subscribe(r)
        #expect(r.events == [.next(1), .completed])
    }

    @Test func retryResubscribesUpToCountThenForwardsTheLastError() {
        var attempts = 0
        let r = Recorder<Int>()
        Signal<Int> { s in
            attempts += 1
            s.sendNext(attempts)
            s.sendError(TestError("attempt \(attempts)"))
            return nil
        }.retry(2).subscribe(r)
        #expect(attempts == 3)
        #expect(r.events == [.next(1), .next(2), .next(3), .error(TestError("attempt 3"))])
    }

    @Test func retryStopsRetryingOnceTheSourceSucceeds() {
        var attempts = 0
        let r = Recorder<Int>()
        Signal<Int> { s in
            attempts += 1
            if attempts < 3 { s.sendError(TestError()) } else { s.sendNext(7); s.sendCompleted() }
            return nil
        }.retry(10).subscribe(r)
        #expect(attempts == 3)
        #expect(r.events == [.next(7), .completed])
    }

    @Test func retryingASignalThatFailsAtOnceRunsInALoop() {
        var attempts = 0
        let r = Recorder<Int>()
        let retries = Workload.size(100_000)
        Signal<Int> { s in attempts += 1; s.sendError(TestError()); return nil }.retry(retries).subscribe(r)
        #expect(attempts == retries + 1)
        #expect(r.events == [.error(TestError())])
    }

    @Test func timeoutFailsWhenTheSignalDoesNotEndInTime() {
        let clock = TestScheduler()
        let source = Marbles.hot("-1-2-----3|", on: clock)
        let r = TimedRecorder<String>(clock)
        source.timeout(.milliseconds(50), on: clock).subscribe(r)
        clock.run()
        #expect(r.entries.count == 3)
        #expect(r.entries[2].time == .milliseconds(50))
        #expect(r.entries[2].event.error is TimeoutError)
    }

    @Test func timeoutIsCancelledWhenTheSignalEndsFirst() {
        let clock = TestScheduler()
        #expect(marbles(Marbles.hot("-1|", on: clock).timeout(.milliseconds(50), on: clock), on: clock) == "-1|")
    }
}

@Suite(.leakChecked) struct TimeOperatorTests {
    @Test func delayShiftsValuesAndCompletion() {
        let clock = TestScheduler()
        #expect(marbles(Marbles.hot("-1-2-|", on: clock).delay(.milliseconds(20), on: clock), on: clock) == "---1-2-|")
    }

    @Test func delayPassesErrorsAtOnceAndDropsWhatWaits() {
        let clock = TestScheduler()
        #expect(marbles(Marbles.hot("-1-#", on: clock).delay(.milliseconds(50), on: clock), on: clock) == "---#")
    }

    @Test(.offThePool) func delayKeepsOrderOnABackgroundScheduler() {
        let values = Box<[Int]>([])
        let done = Box(false)
        Signal.from(0..<500).delay(.milliseconds(1), on: BackgroundScheduler())
            .subscribe(next: { v in values.mutate { $0.append(v) } }, completed: { done.value = true })
        #expect(waitUntil { done.value })
        #expect(values.value == Array(0..<500))
    }

    @Test func throttleSendsTheFirstAtOnceThenTheLatestPerInterval() {
        let clock = TestScheduler()
        let source = Marbles.hot("-a-b-c------d---|", on: clock)
        #expect(marbles(source.throttle(.milliseconds(30), on: clock), on: clock) == "-a--b--c----d---|")
    }

    @Test func throttleSendsAWaitingValueOnCompletionAndDropsItOnError() {
        let clock = TestScheduler()
        #expect(marbles(Marbles.hot("-ab|", on: clock).throttle(.milliseconds(50), on: clock), on: clock) == "-a-(b|)")
        let clock2 = TestScheduler()
        #expect(marbles(Marbles.hot("-ab#", on: clock2).throttle(.milliseconds(50), on: clock2), on: clock2) == "-a-#")
    }

    @Test func debounceSendsAfterAQuietInterval() {
        let clock = TestScheduler()
        let source = Marbles.hot("-a-b----c-------|", on: clock)
        #expect(marbles(source.debounce(.milliseconds(30), on: clock), on: clock) == "------b----c----|")
    }

    @Test func debounceSendsThePendingValueOnCompletionAndDropsItOnError() {
        let clock = TestScheduler()
        #expect(marbles(Marbles.hot("-a-b|", on: clock).debounce(.milliseconds(50), on: clock), on: clock) == "----(b|)")
        let clock2 = TestScheduler()
        #expect(marbles(Marbles.hot("-a-b#", on: clock2).debounce(.milliseconds(50), on: clock2), on: clock2) == "----#")
    }

    @Test func bufferCountSendsFullArraysThenThePartialOneOnCompletion() {
        let r = Recorder<[Int]>()
        Signal.from([1, 2, 3, 4, 5]).buffer(count: 2).subscribe(r)
        #expect(r.events == [.next([1, 2]), .next([3, 4]), .next([5]), .completed])
        let failed = Recorder<[Int]>()
        Signal<Int> { s in s.sendNext(1); s.sendError(TestError()); return nil }.buffer(count: 2).subscribe(failed)
        #expect(failed.events == [.error(TestError())])
    }

    @Test func bufferTimeSpanSendsEachSpansValues() {
        let clock = TestScheduler()
        let source = Marbles.hot("-1-2---3-----|", on: clock)
        let r = TimedRecorder<[String]>(clock)
        source.buffer(timeSpan: .milliseconds(50), on: clock).subscribe(r)
        clock.advance(by: .milliseconds(200))
        #expect(r.entries.map(\.event) == [.next(["1", "2"]), .next(["3"]), .completed])
        #expect(r.entries.map(\.time) == [.milliseconds(50), .milliseconds(100), .milliseconds(130)])
    }

    @Test func sampleSendsTheLatestValueWhenTheSamplerFires() {
        let clock = TestScheduler()
        let source = Marbles.hot("-1-2---3---", on: clock)
        let sampler = Marbles.hot("x--x-x---x-|", on: clock)
        #expect(marbles(source.sample(sampler), on: clock) == "---2-2---3-|")
    }

    @Test func intervalTicksAtMultiplesOfThePeriod() {
        let clock = TestScheduler()
        let r = TimedRecorder<Int>(clock)
        let d = Signal<Int>.interval(.milliseconds(40), on: clock).subscribe(r)
        clock.advance(by: .milliseconds(130))
        #expect(r.entries.map(\.event) == [.next(0), .next(1), .next(2)])
        #expect(r.entries.map(\.time) == [.milliseconds(40), .milliseconds(80), .milliseconds(120)])
        d.dispose()
        clock.advance(by: .seconds(1))
        #expect(r.entries.count == 3)
        #expect(clock.pendingCount == 0 || clock.pendingCount == 1)
    }

    @Test func timerSendsOnceAtTheDueTimeThenCompletes() {
        let clock = TestScheduler()
        #expect(marbles(Signal<Int>.timer(.milliseconds(50), on: clock), on: clock) == "-----(0|)")
    }
}
