import Testing
@testable import Ripple
import RippleTestSupport
import RippleTesting

@Suite(.leakChecked) struct ErrorOperatorTests {
    @Test func catchSwitchesToTheHandlersSignal() {
        let clock = TestScheduler()
        let digits: [Character: Int] = ["1": 1, "8": 8, "9": 9]
        var caught: [String] = []
        let source = clock.cold("(1#)", values: digits, error: TestError("x"))
        let replacement = clock.cold("(89|)", values: digits)
        let r = clock.record(source.catch { error in caught.append("\(error)"); return replacement })
        #expect(r.events == RecordedEvents("(189|)", values: digits))
        #expect(caught == ["x"])
        #expect(source.subscriptions == ["(^!)"])
        #expect(replacement.subscriptions == ["(^!)"])
    }

    @Test func catchPassesCompletionThrough() {
        let clock = TestScheduler()
        let replacement = clock.cold("(9|)")
        let r = clock.record(clock.cold("(1|)").catchTo(replacement))
        #expect(r.events == "(1|)")
        #expect(replacement.subscriptions.isEmpty)
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
        let source = clock.hot("-1-2-----3|")
        let r = clock.record(source.timeout(.milliseconds(50), on: clock))
        clock.run()
        #expect(r.events == RecordedEvents("-1-2-#", error: TimeoutError(interval: .milliseconds(50))))
        #expect(source.subscriptions == ["^----!"])
    }

    @Test func timeoutIsCancelledWhenTheSignalEndsFirst() {
        let clock = TestScheduler()
        let r = clock.record(clock.hot("-1|").timeout(.milliseconds(50), on: clock))
        clock.run(until: .milliseconds(20))
        #expect(r.events == "-1|")
        #expect(clock.nextDueTime == nil, "the timeout's timer was cancelled when the signal completed")
    }
}

@Suite(.leakChecked) struct TimeOperatorTests {
    @Test func delayShiftsValuesAndCompletion() {
        let clock = TestScheduler()
        let r = clock.record(clock.hot("-1-2-|").delay(.milliseconds(20), on: clock))
        clock.run()
        #expect(r.events == "---1-2-|")
    }

    @Test func delayPassesErrorsAtOnceAndDropsWhatWaits() {
        let clock = TestScheduler()
        let r = clock.record(clock.hot("-1-#").delay(.milliseconds(50), on: clock))
        clock.run()
        #expect(r.events == "---#")
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
        let r = clock.record(clock.hot("-a-b-c------d---|").throttle(.milliseconds(30), on: clock))
        clock.run()
        #expect(r.events == "-a--b--c----d---|")
    }

    @Test func throttleSendsAWaitingValueOnCompletionAndDropsItOnError() {
        let clock = TestScheduler()
        let completing = clock.record(clock.hot("-ab|").throttle(.milliseconds(50), on: clock))
        clock.run()
        #expect(completing.events == "-a-(b|)")
        let clock2 = TestScheduler()
        let failing = clock2.record(clock2.hot("-ab#").throttle(.milliseconds(50), on: clock2))
        clock2.run()
        #expect(failing.events == "-a-#")
    }

    @Test func debounceSendsAfterAQuietInterval() {
        let clock = TestScheduler()
        let r = clock.record(clock.hot("-a-b----c-------|").debounce(.milliseconds(30), on: clock))
        clock.run()
        #expect(r.events == "------b----c----|")
    }

    @Test func debounceSendsThePendingValueOnCompletionAndDropsItOnError() {
        let clock = TestScheduler()
        let completing = clock.record(clock.hot("-a-b|").debounce(.milliseconds(50), on: clock))
        clock.run()
        #expect(completing.events == "----(b|)")
        let clock2 = TestScheduler()
        let failing = clock2.record(clock2.hot("-a-b#").debounce(.milliseconds(50), on: clock2))
        clock2.run()
        #expect(failing.events == "----#")
    }

    @Test func bufferCountSendsFullArraysThenThePartialOneOnCompletion() {
        let clock = TestScheduler()
        let r = clock.record(clock.cold("(12345|)", values: ["1": 1, "2": 2, "3": 3, "4": 4, "5": 5]).buffer(count: 2))
        #expect(r.events == [.next(0, [1, 2]), .next(0, [3, 4]), .next(0, [5]), .completed(0)])
        let failed = clock.record(clock.cold("(1#)", values: ["1": 1], error: TestError()).buffer(count: 2))
        #expect(failed.events == [.error(0, TestError())])
    }

    @Test func bufferTimeSpanSendsEachSpansValues() {
        let clock = TestScheduler()
        let source = clock.hot("-1-2---3-----|")
        let r = clock.record(source.buffer(timeSpan: .milliseconds(50), on: clock))
        clock.run(until: .milliseconds(200))
        #expect(r.events == [.next(50, ["1", "2"]), .next(100, ["3"]), .completed(130)])
        #expect(source.subscriptions == ["^------------!"])
    }

    @Test func sampleSendsTheLatestValueWhenTheSamplerFires() {
        let clock = TestScheduler()
        let source = clock.hot("-1-2---3---")
        let sampler = clock.hot("x--x-x---x-|")
        let r = clock.record(source.sample(sampler))
        clock.run()
        #expect(r.events == "---2-2---3-|")
        #expect(source.subscriptions == ["^----------!"])
    }

    @Test func intervalTicksAtMultiplesOfThePeriod() {
        let clock = TestScheduler()
        let r = clock.record(Signal<Int>.interval(.milliseconds(40), on: clock))
        clock.run(until: .milliseconds(130))
        #expect(r.events == [.next(40, 0), .next(80, 1), .next(120, 2)])
        #expect(clock.nextDueTime == .milliseconds(160))
        r.dispose()
        clock.advance(by: .seconds(1))
        #expect(r.events.count == 3)
        #expect(clock.pendingCount == 0 || clock.pendingCount == 1)
        #expect(clock.nextDueTime == nil)
    }

    @Test func timerSendsOnceAtTheDueTimeThenCompletes() {
        let clock = TestScheduler()
        let r = clock.record(Signal<Int>.timer(.milliseconds(50), on: clock))
        clock.run()
        #expect(r.events == [.next(50, 0), .completed(50)])
        #expect(r.events.description == "-----(0|)")
    }
}
