import Foundation
import Testing
@testable import Ripple
import RippleTestSupport
import RippleTesting

@Suite(.leakChecked) struct UnlimitedRetryTests {
    @Test func itResubscribesAfterEveryErrorUntilAnAttemptCompletes() {
        let clock = TestScheduler()
        var attempts = 0
        let source = Signal<String>.deferred {
            attempts += 1
            return attempts < 3 ? clock.cold("-1-#") : clock.cold("-1-2|")
        }
        let r = clock.record(source.retry())
        clock.run()
        #expect(r.events == "-1--1--1-2|")
        #expect(attempts == 3)
    }

    @Test func aSourceThatFailsAtOnceForeverRunsInConstantStackUntilTheResultEnds() {
        let stop = Subject<Void>()
        let limit = Workload.size(20_000)
        var attempts = 0
        var first: StackSpot?, last: StackSpot?
        let r = Recorder<Int>()
        Signal<Int> { s in
            attempts += 1
            if attempts == 1 { first = .here() }
            if attempts == limit {
                last = .here()
                stop.sendNext(())  // ends the result from inside an attempt
            }
            s.sendError(TestError())
            return nil
        }.retry().take(until: stop).subscribe(r)
        #expect(attempts == limit)
        #expect(r.events == [.completed])
        first?.expectSameThreadAndDepth(as: last, "attempt \(limit) against the first")
    }

    @Test(.offThePool) func endingTheResultFromAnotherThreadStopsASynchronousRetryLoop() {
        let attempts = Box(0)
        let stop = Subject<Void>()
        let reached = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let recorder = Recorder<Int>()
        let source = Signal<Int> { s in
            if attempts.mutate({ $0 += 1; return $0 }) == 1_000 { reached.signal() }
            s.sendError(TestError())
            return nil
        }
        Thread.detachNewThread {
            source.retry().take(until: stop).subscribe(recorder)  // loops on this thread until stopped
            finished.signal()
        }
        guard finishes("the retry loop reaching attempt 1,000", { reached.wait() }) else { return }
        stop.sendNext(())  // disposes the retry's subscription from this thread
        let atStop = attempts.value
        // The subscribe call returned: the loop saw the dispose.
        guard finishes("the retry loop's subscribe returning after the stop", { finished.wait() }) else { return }
        #expect(recorder.events == [.completed])
        #expect(attempts.value <= atStop + 1, "at most the attempt already starting when the stop returned")
    }
}

@Suite(.leakChecked) struct BackoffRetryTests {
    static let backoff = RetryBackoff.exponential(
        initial: .milliseconds(10), multiplier: 2, maximum: .milliseconds(30), jitter: 0)

    @Test func theWaitsGrowGeometricallyUpToTheMaximumThenTheLastErrorIsForwarded() {
        let clock = TestScheduler()
        let source = clock.cold("-1#")
        let r = clock.record(source.retry(upTo: 3, backoff: Self.backoff, on: clock))
        clock.run()
        // Attempts at 0, 30 (after 10 ms), 70 (after 20 ms), 120 (after 30 ms: 40 capped).
        #expect(r.events == "-1--1---1----1#")
        #expect(source.subscriptions == ["^-!", "---^-!", "-------^-!", "------------^-!"])
    }

    @Test func theLastAttemptsErrorIsTheOneForwarded() {
        let clock = TestScheduler()
        var attempts = 0
        let source = Signal<String>.deferred {
            attempts += 1
            return clock.cold("-#", error: TestError("attempt \(attempts)"))
        }
        let r = clock.record(source.retry(upTo: 2, backoff: .constant(.milliseconds(10)), on: clock))
        clock.run()
        #expect(r.events == RecordedEvents("-----#", error: TestError("attempt 3")))
    }

    @Test func aValueDoesNotResetTheBackoff() {
        let clock = TestScheduler()
        let r = clock.record(clock.cold("(12)#").retry(upTo: 2, backoff: Self.backoff, on: clock))
        clock.run()
        #expect(r.events == "(12)-(12)--(12)#", "waits of 10 then 20 ms, though every attempt sent values")
    }

    @Test func anAttemptThatCompletesCompletesTheResult() {
        let clock = TestScheduler()
        var attempts = 0
        let source = Signal<String>.deferred {
            attempts += 1
            return attempts == 1 ? clock.cold("#") : clock.cold("-a|")
        }
        let r = clock.record(source.retry(upTo: 5, backoff: Self.backoff, on: clock))
        clock.run()
        #expect(r.events == "--a|")
        #expect(clock.nextDueTime == nil)
    }

    @Test func disposingWhileWaitingCancelsTheTimer() {
        let clock = TestScheduler()
        let source = clock.cold("-#")
        let r = clock.record(source.retry(upTo: 3, backoff: .constant(.milliseconds(100)), on: clock))
        clock.advance(to: .milliseconds(50))
        #expect(clock.nextDueTime == .milliseconds(110), "the retry waits")
        r.dispose()
        #expect(clock.nextDueTime == nil, "the timer was cancelled")
        clock.run()
        #expect(source.subscriptions == ["^!"])
        #expect(r.events == "")
    }

    @Test func disposingDuringAnAttemptDisposesIt() {
        let clock = TestScheduler()
        let source = clock.cold("-1--#")
        let r = clock.record(source.retry(upTo: 3, backoff: Self.backoff, on: clock))
        clock.advance(to: .milliseconds(20))
        r.dispose()
        #expect(clock.nextDueTime == nil)
        #expect(source.subscriptions == ["^-!"])
    }

    @Test func anImmediateBackoffOnASynchronousSchedulerRunsInConstantStack() {
        let limit = Workload.size(100_000)
        let attempts = Box(0)
        let first = Box<StackSpot?>(nil), last = Box<StackSpot?>(nil)
        let r = Recorder<Int>()
        Signal<Int> { s in
            let attempt = attempts.mutate { $0 += 1; return $0 }
            if attempt == 1 { first.value = .here() }
            if attempt == limit + 1 { last.value = .here() }
            s.sendError(TestError())
            return nil
        }
        .retry(upTo: limit, backoff: .immediate, on: ImmediateScheduler.shared).subscribe(r)
        #expect(attempts.value == limit + 1)
        #expect(r.events == [.error(TestError())])
        first.value?.expectSameThreadAndDepth(as: last.value, "attempt \(limit + 1) against the first")
    }

    @Test func exponentialDelaysAreCappedAndJitterShortensThemByTheDrawnShare() {
        let plain = RetryBackoff.exponential(initial: .milliseconds(100), multiplier: 2, maximum: .seconds(1), jitter: 0)
        #expect((1...6).map { plain.delay(beforeRetry: $0) }
            == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1)])
        let half = RetryBackoff.exponential(
            initial: .milliseconds(100), multiplier: 2, maximum: .seconds(1), jitter: 0.5, random: { 0.5 })
        #expect(half.delay(beforeRetry: 2) == .milliseconds(150), "200 ms less half of the jittered half")
        let full = RetryBackoff.exponential(
            initial: .milliseconds(100), multiplier: 2, maximum: .seconds(1), jitter: 1, random: { 0 })
        #expect(full.delay(beforeRetry: 3) == .milliseconds(400), "a draw of 0 takes nothing off")
        #expect(RetryBackoff.constant(.seconds(2)).delay(beforeRetry: 9) == .seconds(2))
        #expect(RetryBackoff.immediate.delay(beforeRetry: 1) == .zero)
    }

    @Test func aLongRunOfRetriesNeverPassesTheMaximum() {
        let backoff = RetryBackoff.exponential(initial: .nanoseconds(1), multiplier: 10, maximum: .seconds(60), jitter: 0)
        #expect(backoff.delay(beforeRetry: 1_000_000) == .seconds(60))
    }

    @Test func aHugeMaximumIsReachedWithoutOverflowingTheDelay() {
        let backoff = RetryBackoff.exponential(initial: .seconds(1), multiplier: 1_000, maximum: .seconds(Int64.max), jitter: 0)
        #expect(backoff.delay(beforeRetry: 2) == .seconds(1_000))
        #expect(backoff.delay(beforeRetry: 7) > .seconds(999_999_999_000_000_000), "10¹⁸ s, below the maximum")
        #expect(backoff.delay(beforeRetry: 8) == .seconds(Int64.max), "10²¹ s would pass the maximum: capped, not multiplied")
        #expect(backoff.delay(beforeRetry: .max) == .seconds(Int64.max))
    }

    @Test func theLastRetryTakesAsFewStepsAsTheFirst() {
        let tiny = Duration(secondsComponent: 0, attosecondsComponent: 1)
        let slow = RetryBackoff.exponential(initial: tiny, multiplier: 1.5, maximum: .seconds(1), jitter: 0)
        let barelyGrowing = RetryBackoff.exponential(initial: .seconds(1), multiplier: 1.000_000_000_001, maximum: .seconds(2), jitter: 0)
        let delays = Box<[Duration]>([])
        finishes("delays before retry Int.max") {
            delays.value = [slow.delay(beforeRetry: .max), barelyGrowing.delay(beforeRetry: .max)]
        }
        #expect(delays.value == [.seconds(1), .seconds(2)])
    }

    @Test func aDelayOfAFewAttosecondsStillGrowsByTheMultiplier() {
        let tiny = Duration(secondsComponent: 0, attosecondsComponent: 1)
        let backoff = RetryBackoff.exponential(initial: tiny, multiplier: 1.5, maximum: .seconds(1), jitter: 0)
        let delay = backoff.delay(beforeRetry: 101)  // 1.5¹⁰⁰ attoseconds, about 0.41 s
        #expect(delay > .milliseconds(400) && delay < .milliseconds(410), "got \(delay)")
    }

    @Test func aJitterDrawOutsideZeroToOneIsClampedAndNaNTakesNothingOff() {
        func delay(drawing draw: Double) -> Duration {
            RetryBackoff.exponential(initial: .seconds(1), multiplier: 2, maximum: .seconds(8), jitter: 1, random: { draw })
                .delay(beforeRetry: 2)
        }
        #expect(delay(drawing: .nan) == .seconds(2))
        #expect(delay(drawing: -3) == .seconds(2))
        #expect(delay(drawing: .infinity) > .zero, "clamped below 1: never the whole delay")
        #expect(delay(drawing: .infinity) < .nanoseconds(1))
        #expect(delay(drawing: 0.25) == .milliseconds(1_500))
        #expect(RetryBackoff.constant(.seconds(4), jitter: 0.5, random: { .nan }).delay(beforeRetry: 1) == .seconds(4))
    }

    @Test func anInfiniteMultiplierStopsWithAMessage() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RetryBackoff.exponential(initial: .seconds(1), multiplier: .infinity, maximum: .seconds(10))
        }.map { result in
            let message = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(message.contains("RetryBackoff.exponential: multiplier must be a finite number, got inf"))
        }
    }

    @Test func aRetryNumberBelowOneStopsWithAMessage() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RetryBackoff.constant(.seconds(1)).delay(beforeRetry: 0)
        }.map { result in
            let message = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(message.contains("RetryBackoff.delay(beforeRetry:): retries count from 1, got 0"))
        }
    }

    @Test func aMultiplierBelowOneStopsWithAMessage() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RetryBackoff.exponential(initial: .seconds(1), multiplier: 0.5, maximum: .seconds(10))
        }.map { result in
            let message = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(message.contains("RetryBackoff.exponential: multiplier must be 1 or more, got 0.5"))
        }
    }

    @Test func aMaximumBelowTheInitialDelayStopsWithAMessage() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RetryBackoff.exponential(initial: .seconds(2), maximum: .seconds(1))
        }.map { result in
            let message = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(message.contains("RetryBackoff.exponential: maximum (1.0 seconds) must be at least initial (2.0 seconds)"))
        }
    }

    @Test func aNegativeInitialDelayStopsWithAMessage() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RetryBackoff.exponential(initial: .seconds(-1), maximum: .seconds(1))
        }.map { result in
            let message = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(message.contains("RetryBackoff.exponential: initial must not be negative, got -1.0 seconds"))
        }
    }

    @Test func aNegativeConstantDelayStopsWithAMessage() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RetryBackoff.constant(.seconds(-1))
        }.map { result in
            let message = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(message.contains("RetryBackoff.constant: the delay must not be negative, got -1.0 seconds"))
        }
    }

    @Test func aJitterOutsideZeroToOneStopsWithAMessage() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RetryBackoff.constant(.seconds(1), jitter: 1.5)
        }.map { result in
            let message = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(message.contains("RetryBackoff: jitter must be between 0 and 1, got 1.5"))
        }
    }

    @Test func aNegativeCountStopsWithAMessage() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Signal.just(1).retry(upTo: -1, backoff: .immediate, on: ImmediateScheduler.shared)
        }.map { result in
            let message = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(message.contains("retry(upTo:backoff:on:) needs a count of zero or more, got -1"))
        }
    }
}

@Suite struct BackoffRetryStateTests {
    @Test func aTimerScheduledAfterItsWaitEndedIsHandedBackToBeDisposed() {
        var state = BackoffRetryState(limit: 2)
        let failure = state.attemptFailed()
        #expect(failure == .wait(retry: 1, generation: 1))
        let timer = ActionDisposable {}
        let fired = state.timerFired(1).retry  // before `schedule` returned: a synchronous scheduler
        let kept = state.keep(timer, for: 1)
        #expect(fired)
        #expect(kept === timer, "a timer that fired is handed back, not kept")
    }

    @Test func disposingHandsBackThePendingTimerAndEndsEveryPhase() {
        var state = BackoffRetryState(limit: 2)
        _ = state.attemptFailed()
        let timer = ActionDisposable {}
        let stale = state.keep(timer, for: 1)
        let pending = state.dispose()
        let fired = state.timerFired(1).retry
        let failure = state.attemptFailed()
        let completed = state.attemptCompleted()
        #expect(stale == nil)
        #expect(pending === timer)
        #expect(!fired && failure == .ignore && !completed)
    }

    @Test func theFailureAfterTheLastRetryIsForwarded() {
        var state = BackoffRetryState(limit: 1)
        let first = state.attemptFailed()
        _ = state.timerFired(1)
        let second = state.attemptFailed()
        #expect(first == .wait(retry: 1, generation: 1))
        #expect(second == .forward)
        #expect(state.phase == .finished)
    }
}

@Suite(.leakChecked) struct RetryWhenTests {
    @Test func eachTriggerValueResubscribesAndItsCompletionCompletesTheResult() {
        let clock = TestScheduler()
        let source = clock.cold("-1#")
        let r = clock.record(source.retry(when: { errors in errors.delay(.milliseconds(20), on: clock).take(2) }))
        clock.run()
        #expect(r.events == "-1---1---1|", "the trigger completed with its second value: the third failure completes")
        #expect(source.subscriptions == ["^-!", "----^-!", "--------^-!"])
    }

    @Test func theTriggersErrorFailsTheResult() {
        let clock = TestScheduler()
        let r = clock.record(clock.cold("-1#").retry(when: { errors in
            errors.flatMap { _ in Signal<Int>.error(TestError("gave up")) }
        }))
        clock.run()
        #expect(r.events == RecordedEvents("-1#", error: TestError("gave up")))
    }

    @Test func theHandlerGetsTheSourcesErrors() {
        let clock = TestScheduler()
        var attempts = 0
        var seen: [String] = []
        let source = Signal<String>.deferred {
            attempts += 1
            return clock.cold("-#", error: TestError("attempt \(attempts)"))
        }
        let r = clock.record(source.retry(when: { errors in
            errors.onNext { seen.append("\($0)") }.take(while: { _ in seen.count < 3 })
        }))
        clock.run()
        #expect(seen == ["attempt 1", "attempt 2", "attempt 3"])
        #expect(r.events == "---|")
    }

    @Test func triggerValuesWhileAnAttemptRunsAreIgnored() {
        let clock = TestScheduler()
        let source = clock.cold("-1-2-3|")
        let r = clock.record(source.retry(when: { _ in clock.hot("-x-x-x") }))
        clock.run()
        #expect(r.events == "-1-2-3|")
        #expect(source.subscriptions == ["^-----!"])
    }

    @Test func aTriggerThatAnswersAtOnceRetriesInConstantStack() {
        let limit = Workload.size(100_000)
        var attempts = 0
        var first: StackSpot?, last: StackSpot?
        let r = Recorder<Int>()
        Signal<Int> { s in
            attempts += 1
            if attempts == 1 { first = .here() }
            if attempts == limit + 1 { last = .here() }
            s.sendError(TestError())
            return nil
        }
        .retry(when: { errors in errors.take(limit) }).subscribe(r)
        #expect(attempts == limit + 1)
        #expect(r.events == [.completed])
        first?.expectSameThreadAndDepth(as: last, "attempt \(limit + 1) against the first")
    }

    @Test func disposingWhileWaitingLeavesNothingScheduled() {
        let clock = TestScheduler()
        let source = clock.cold("-#")
        let r = clock.record(source.retry(when: { errors in errors.delay(.milliseconds(100), on: clock) }))
        clock.advance(to: .milliseconds(50))
        #expect(clock.nextDueTime == .milliseconds(110))
        r.dispose()
        #expect(clock.nextDueTime == nil)
        #expect(r.events == "")
    }
}

@Suite struct RetryWhenStateTests {
    @Test func theTriggersEndIsKeptWhileAnAttemptRunsAndReplacesItsError() {
        var state = RetryWhenState()
        let now = state.triggerEnded(.completed)
        #expect(now == nil, "an attempt runs: the end waits for it")
        let failure = state.attemptFailed()
        guard case .end(.completed) = failure else {
            Issue.record("the failure ends the result as the trigger did, got \(failure)")
            return
        }
        #expect(state.phase == .finished)
    }

    @Test func aTriggerValueRetriesOnlyWhileWaiting() {
        var state = RetryWhenState()
        let early = state.triggerSent()
        let failure = state.attemptFailed()
        let retry = state.triggerSent()
        let again = state.triggerSent()
        #expect(!early, "no failure to answer yet")
        guard case .publish = failure else {
            Issue.record("the error goes to the trigger, got \(failure)")
            return
        }
        #expect(retry)
        #expect(!again, "one retry per failure")
    }
}
