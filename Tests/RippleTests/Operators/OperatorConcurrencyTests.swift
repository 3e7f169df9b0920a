import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

@Suite(.leakChecked, .offThePool) struct OperatorConcurrencyTests {
    @Test func mergeOfSignalsSendingOnFourThreadsDeliversEverythingThenOneCompletion() {
        for round in 0..<20 {
            let subjects = (0..<4).map { _ in Subject<Int>() }
            let recorder = CompletenessRecorder()
            Signal<Int>.merge(subjects).subscribe(next: { recorder.next($0) }, completed: { recorder.terminal() })
            // Every send returns, each source's completion included.
            let returned = finishes("round \(round): four sources sending, then completing") {
                runConcurrently(threads: 4) { thread in
                    for i in 0..<1_000 { subjects[thread].sendNext(thread * 1_000 + i) }
                    subjects[thread].sendCompleted()
                }
            }
            // Every value once, each source's in its order, never overlapping, then one completion.
            recorder.expectComplete(sent: (0..<4).map { thread in (0..<1_000).map { thread * 1_000 + $0 } }, terminated: true)
            if !returned { break }
        }
    }

    /// 200 inner signals, each sending two values on a background scheduler of its own: every
    /// value arrives exactly once, each inner signal's two in order, never overlapping, then
    /// one completion, last.
    @Test func flatMapOfInnerSignalsOnBackgroundSchedulersDeliversEveryValueOnceInOrderThenOneCompletion() {
        for round in 0..<10 {
            let recorder = CompletenessRecorder()
            let completions = Box(0)
            let scope = RippleDebug.currentScope
            let returned = finishes("round \(round): subscribing to the flatMap of 200 inner signals") {
                RippleDebug.$currentScope.withValue(scope) {  // the subscriptions count for the leak check
                    _ = Signal.from(0..<200)
                        .flatMap { value in Signal.from([value * 2, value * 2 + 1]).subscribe(on: BackgroundScheduler()) }
                        .subscribe(
                            next: { recorder.next($0) },
                            error: { _ in recorder.terminal() },
                            completed: { completions.mutate { $0 += 1 }; recorder.terminal() })
                }
            }
            #expect(waitUntil { recorder.terminalCount > 0 }, "round \(round): the completion never arrived")
            #expect(completions.value == 1, "round \(round): the terminal event is the completion")
            recorder.expectComplete(sent: (0..<200).map { [$0 * 2, $0 * 2 + 1] }, terminated: true)
            if !returned { break }
        }
    }

    /// Each value accepted once both sides have one makes exactly one pair, in the order the
    /// values were accepted: the pairs start when the second side's first value (0) arrives,
    /// then each one steps one side forward by one, up to both latest values, then one completion.
    @Test func combineLatestFedFromTwoThreadsEmitsOnePairPerValueEndingWithBothLatestThenOneCompletion() {
        for round in 0..<20 {
            let a = Subject<Int>(), b = Subject<Int>()
            let recorder = CompletenessRecorder()
            a.combineLatest(b).subscribe(next: { pair in recorder.next(pair.0 * 10_000 + pair.1) },
                                         completed: { recorder.terminal() })
            let returned = finishes("round \(round): two sources sending, then completing") {
                runConcurrently(threads: 2) { thread in
                    let subject = thread == 0 ? a : b
                    for i in 0...1_000 { subject.sendNext(i) }
                    subject.sendCompleted()
                }
            }
            let pairs = recorder.received.map { (a: $0 / 10_000, b: $0 % 10_000) }
            #expect(pairs.last?.a == 1_000)
            #expect(pairs.last?.b == 1_000)
            #expect(pairs.first.map { $0.a == 0 || $0.b == 0 } == true, "round \(round): the first pair is \(String(describing: pairs.first))")
            let badSteps = zip(pairs, pairs.dropFirst()).filter { p, q in
                !((q.a == p.a + 1 && q.b == p.b) || (q.a == p.a && q.b == p.b + 1))
            }
            #expect(badSteps.isEmpty, "round \(round): pairs lost, repeated or out of order: \(badSteps.prefix(3))")
            #expect(recorder.terminalCount == 1, "one completion, once both sources completed")
            // The pairs are checked above; this checks overlap and the one terminal event, last.
            recorder.expectComplete(sent: [recorder.received], terminated: true)
            if !returned { break }
        }
    }

    /// Threads each subscribe, send a value and dispose, 100 times: the source is subscribed once
    /// per connection and released (`live` back to 0), and each subscription receives its own
    /// value, exactly once. Then a last subscriber gets a value and the completion, once.
    @Test func shareSubscribedAndDisposedFromManyThreadsStaysConsistentAndDeliversEachSubscribersOwnValueOnce() {
        for round in 0..<20 {
            let source = Subject<Int>()
            let live = Box(0)
            let shared = source.onSubscribe { live.mutate { $0 += 1 } }.onDispose { live.mutate { $0 -= 1 } }.share()
            let notOnce = Box<[(value: Int, received: [Int])]>([])
            let returned = finishes("round \(round): four threads subscribing, sending, disposing") {
                runConcurrently(threads: 4) { thread in
                    for i in 0..<100 {
                        let value = thread * 1_000 + i
                        let received = Box<[Int]>([])
                        let d = shared.subscribe(next: { v in received.mutate { $0.append(v) } })
                        source.sendNext(value)
                        d.dispose()
                        let got = received.value
                        if got.filter({ $0 == value }).count != 1 || Set(got).count != got.count {
                            notOnce.mutate { $0.append((value, got)) }
                        }
                    }
                }
            }
            #expect(live.value == 0)
            let misses = notOnce.value
            #expect(misses.count == 0,
                    "round \(round): subscriptions that did not get their own value exactly once, e.g. \(misses.prefix(3))")
            let last = CompletenessRecorder()
            let subscription = shared.subscribe(next: { last.next($0) }, completed: { last.terminal() })
            finishes("round \(round): the last value and the completion") {
                source.sendNext(-1)
                source.sendCompleted()
            }
            last.expectComplete(sent: [[-1]], terminated: true)
            subscription.dispose()
            #expect(live.value == 0)
            if !returned || !misses.isEmpty { break }
        }
    }

    /// `other` moves on from one thread while `self` sends from another, then each ends
    /// (`other` failing in even rounds, completing in odd ones): each value of `self` is paired
    /// once, in its order, with a latest value of `other` that never goes back, and exactly one
    /// terminal event comes, last. `other` has a value before the threads start, so every value
    /// of `self` up to the end has a partner.
    @Test func withLatestFedFromTwoThreadsPairsEachValueOnceWithALatestThatNeverGoesBackThenEndsOnce() {
        for round in 0..<20 {
            let source = Subject<Int>(), other = Subject<Int>()
            let recorder = CompletenessRecorder()
            let partners = Box<[Int]>([])
            source.withLatest(from: other).subscribe(
                next: { pair in
                    partners.mutate { $0.append(pair.1) }
                    recorder.next(pair.0)
                },
                error: { _ in recorder.terminal() },
                completed: { recorder.terminal() })
            other.sendNext(0)
            let otherFails = round % 2 == 0
            let returned = finishes("round \(round): the source and the other signal sending, then ending") {
                runConcurrently(threads: 2) { thread in
                    if thread == 0 {
                        for i in 1...1_000 { other.sendNext(i) }
                        if otherFails { other.sendError(TestError()) } else { other.sendCompleted() }
                    } else {
                        for i in 0..<1_000 { source.sendNext(i) }
                        source.sendCompleted()
                    }
                }
            }
            let received = recorder.received
            // The values of `self` up to the end, each once, in order: all of them unless the
            // other signal's error ended the result first.
            recorder.expectComplete(sent: [Array(0..<received.count)], terminated: true)
            if !otherFails { #expect(received.count == 1_000, "round \(round): only the source's completion ends the result") }
            let latest = partners.value
            #expect(latest == latest.sorted(), "round \(round): a latest value went back")
            #expect(latest.allSatisfy { (0...1_000).contains($0) }, "round \(round): a partner that was never sent")
            if !returned { break }
        }
    }

    /// The trigger's first value and an error from it come on two threads while the source
    /// sends on a third: the values let through are one unbroken run of the source's, each once
    /// and in order, and exactly one terminal event comes, last. When it is the source's
    /// completion, the run goes on to the source's last value (or is empty: the gate opened
    /// after it).
    @Test func skipUntilWithTheTriggerFiringAndFailingOnOtherThreadsLetsThroughOneUnbrokenRunThenEndsOnce() {
        for round in 0..<20 {
            let source = Subject<Int>(), trigger = Subject<Void>()
            let recorder = CompletenessRecorder()
            let completed = Box(false)
            source.skip(until: trigger).subscribe(
                next: { recorder.next($0) },
                error: { _ in recorder.terminal() },
                completed: {
                    completed.value = true
                    recorder.terminal()
                })
            let returned = finishes("round \(round): the trigger firing and failing, the source sending") {
                runConcurrently(threads: 3) { thread in
                    switch thread {
                    case 0: trigger.sendNext(())
                    case 1: trigger.sendError(TestError())
                    default:
                        for i in 0..<1_000 { source.sendNext(i) }
                        source.sendCompleted()
                    }
                }
            }
            let received = recorder.received
            let first = received.first ?? 0
            recorder.expectComplete(sent: [Array(first..<first + received.count)], terminated: true)
            if completed.value {
                #expect(received.isEmpty || received.last == 999, "round \(round): completed after \(received.last ?? -1)")
            }
            if !returned { break }
        }
    }

    /// The clock reaches the timeout on one thread while the source sends and completes on
    /// another: the result is a run of the source's first values, each once and in order, then
    /// either nothing more (the source ended first: all of its values) or the fallback's values,
    /// and exactly one completion, last.
    @Test func timeoutSwitchingWithTheClockOnAnotherThreadEndsOnceWithTheSourcesValuesThenTheFallbacksOrNone() {
        for round in 0..<20 {
            let clock = TestScheduler()
            let source = Subject<Int>()
            let recorder = CompletenessRecorder()
            source.timeout(.milliseconds(50), on: clock, switchingTo: Signal.from([-1, -2])).subscribe(
                next: { recorder.next($0) },
                error: { _ in recorder.terminal() },
                completed: { recorder.terminal() })
            let returned = finishes("round \(round): the clock reaching the timeout, the source sending and completing") {
                runConcurrently(threads: 2) { thread in
                    if thread == 0 {
                        clock.advance(by: .milliseconds(50))
                    } else {
                        for i in 0..<1_000 { source.sendNext(i) }
                        source.sendCompleted()
                    }
                }
            }
            let received = recorder.received
            let fromSource = received.filter { $0 >= 0 }
            let fromFallback = received.filter { $0 < 0 }
            #expect(received == fromSource + fromFallback, "round \(round): a source value after the fallback's")
            #expect(fromFallback.isEmpty || fromFallback == [-1, -2], "round \(round): the fallback sent \(fromFallback)")
            if fromFallback.isEmpty { #expect(fromSource.count == 1_000, "round \(round): the source ended first, yet values are missing") }
            recorder.expectComplete(sent: [Array(0..<fromSource.count), fromFallback], terminated: true)
            #expect(clock.livePendingCount == 0, "round \(round): the timer is left scheduled")
            if !returned { break }
        }
    }

    /// The clock ends windows on one thread while the source fills them on another: every value
    /// arrives once, in order, in arrays of one to `count` values, then one completion, last.
    @Test func bufferTimeSpanCountWithTheClockOnAnotherThreadDeliversEveryValueOnceInOrderThenOneCompletion() {
        for round in 0..<20 {
            let clock = TestScheduler()
            let source = Subject<Int>()
            let recorder = CompletenessRecorder()
            let sizes = Box<[Int]>([])
            source.buffer(timeSpan: .milliseconds(10), count: 7, on: clock).subscribe(
                next: { array in
                    sizes.mutate { $0.append(array.count) }
                    for value in array { recorder.next(value) }
                },
                error: { _ in recorder.terminal() },
                completed: { recorder.terminal() })
            let returned = finishes("round \(round): the clock ending windows, the source filling them") {
                runConcurrently(threads: 2) { thread in
                    if thread == 0 {
                        for _ in 0..<200 { clock.advance(by: .milliseconds(10)) }
                    } else {
                        for i in 0..<1_000 { source.sendNext(i) }
                        source.sendCompleted()
                    }
                }
            }
            recorder.expectComplete(sent: [Array(0..<1_000)], terminated: true)
            let badSizes = sizes.value.filter { !(1...7).contains($0) }
            #expect(badSizes.isEmpty, "round \(round): arrays of \(badSizes.prefix(3)) values")
            #expect(clock.livePendingCount == 0, "round \(round): a window's timer is left scheduled")
            if !returned { break }
        }
    }

    /// The clock closes windows on one thread while the source sends on another: the values
    /// let through start with the first, are each sent once and in order, and exactly one
    /// completion comes, last.
    @Test func throttleFirstWithTheClockOnAnotherThreadSendsEachValueAtMostOnceInOrderThenOneCompletion() {
        for round in 0..<20 {
            let clock = TestScheduler()
            let source = Subject<Int>()
            let recorder = CompletenessRecorder()
            source.throttle(.milliseconds(10), latest: false, on: clock).subscribe(
                next: { recorder.next($0) },
                error: { _ in recorder.terminal() },
                completed: { recorder.terminal() })
            let returned = finishes("round \(round): the clock closing windows, the source sending") {
                runConcurrently(threads: 2) { thread in
                    if thread == 0 {
                        for _ in 0..<200 { clock.advance(by: .milliseconds(10)) }
                    } else {
                        for i in 0..<1_000 { source.sendNext(i) }
                        source.sendCompleted()
                    }
                }
            }
            let received = recorder.received
            #expect(received.first == 0, "round \(round): the first value opens the first window")
            #expect(zip(received, received.dropFirst()).allSatisfy { $0 < $1 }, "round \(round): values repeated or out of order")
            #expect(received.allSatisfy { (0..<1_000).contains($0) })
            recorder.expectComplete(sent: [received], terminated: true)
            #expect(clock.livePendingCount == 0, "round \(round): a window's timer is left scheduled")
            if !returned { break }
        }
    }

    /// 100 inner signals, each sending two values on a background scheduler of its own, at
    /// most 3 at once: every value arrives exactly once, each inner signal's two in order,
    /// never overlapping, then one completion, last. An inner signal counts as running from
    /// its subscribe to its completion (counted out on its way to the operator: its disposal
    /// runs only after the operator has seen the completion, and may have started the next).
    @Test func boundedFlatMapOfInnerSignalsOnBackgroundSchedulersRunsAtMostTheLimitAndDeliversEveryValueOnceThenOneCompletion() {
        for round in 0..<10 {
            let recorder = CompletenessRecorder()
            let running = Box(0), peak = Box(0), ended = Box(0)
            let scope = RippleDebug.currentScope
            let returned = finishes("round \(round): subscribing to the bounded flatMap of 100 inner signals") {
                RippleDebug.$currentScope.withValue(scope) {  // the subscriptions count for the leak check
                    _ = Signal.from(0..<100)
                        .flatMap(maxConcurrent: 3) { value in
                            Signal.from([value * 2, value * 2 + 1]).subscribe(on: BackgroundScheduler())
                                .onCompleted { running.mutate { $0 -= 1 } }
                                .onDispose { ended.mutate { $0 += 1 } }
                                .onSubscribe {
                                    let now = running.mutate { $0 += 1; return $0 }
                                    peak.mutate { $0 = max($0, now) }
                                }
                        }
                        .subscribe(
                            next: { recorder.next($0) },
                            error: { _ in recorder.terminal() },
                            completed: { recorder.terminal() })
                }
            }
            #expect(waitUntil { recorder.terminalCount > 0 }, "round \(round): the completion never arrived")
            #expect(waitUntil { ended.value == 100 }, "round \(round): \(ended.value) of 100 inner subscriptions ended")
            #expect(peak.value >= 1 && peak.value <= 3, "round \(round): \(peak.value) inner signals ran at once")
            recorder.expectComplete(sent: (0..<100).map { [$0 * 2, $0 * 2 + 1] }, terminated: true)
            if !returned { break }
        }
    }

    /// Two threads send into the source while admitted inner signals run on background
    /// schedulers: one inner signal runs at a time, each admitted one delivers both its values,
    /// in order and unbroken, every value once, then one completion, last.
    @Test func flatMapFirstFedFromTwoThreadsRunsOneInnerSignalAtATimeAndDeliversEachWholeThenOneCompletion() {
        for round in 0..<20 {
            let outer = Subject<Int>()
            let recorder = CompletenessRecorder()
            let running = Box(0), peak = Box(0)
            _ = outer.flatMapFirst { value in
                Signal.from([value * 2, value * 2 + 1]).subscribe(on: BackgroundScheduler())
                    .onCompleted { running.mutate { $0 -= 1 } }
                    .onSubscribe {
                        let now = running.mutate { $0 += 1; return $0 }
                        peak.mutate { $0 = max($0, now) }
                    }
            }.subscribe(next: { recorder.next($0) }, error: { _ in recorder.terminal() }, completed: { recorder.terminal() })
            let returned = finishes("round \(round): two threads sending into flatMapFirst, then the source completing") {
                runConcurrently(threads: 2) { thread in
                    for i in 0..<500 { outer.sendNext(thread * 1_000 + i) }
                }
                outer.sendCompleted()
            }
            #expect(waitUntil { recorder.terminalCount > 0 }, "round \(round): the completion never arrived")
            let received = recorder.received
            let admitted = received.filter { $0 % 2 == 0 }.map { $0 / 2 }
            #expect(!admitted.isEmpty, "round \(round): no value was admitted")
            #expect(peak.value == 1, "round \(round): \(peak.value) inner signals ran at once")
            let pairs = stride(from: 0, to: received.count - 1, by: 2).map { (received[$0], received[$0 + 1]) }
            #expect(received.count % 2 == 0 && pairs.allSatisfy { $0.0 % 2 == 0 && $0.1 == $0.0 + 1 },
                    "round \(round): an inner signal's values were broken up")
            recorder.expectComplete(sent: admitted.map { [$0 * 2, $0 * 2 + 1] }, terminated: true)
            if !returned { break }
        }
    }

    /// A source that fails at once, retried with no delay on a serial queue, disposed from the
    /// test's thread while the retries' timers fire on the queue: once the dispose returns,
    /// nothing is left scheduled, and no event starts but one already being delivered.
    @Test func backoffRetryOnASerialQueueDisposedWhileItsTimersFireLeavesNothingScheduledAndSendsNothingAfter() {
        let queue = SerialQueueScheduler(label: "retry-race")
        for round in 0..<50 {
            let scheduler = PendingCountingScheduler(queue)
            let attempts = Box(0), delivered = Box(0), terminals = Box(0)
            let source = Signal<Int> { s in
                s.sendNext(attempts.mutate { $0 += 1; return $0 })
                s.sendError(TestError())
                return nil
            }
            let subscription = source.retry(upTo: .max, backoff: .immediate, on: scheduler).subscribe(
                next: { _ in delivered.mutate { $0 += 1 } },
                error: { _ in terminals.mutate { $0 += 1 } },
                completed: { terminals.mutate { $0 += 1 } })
            let target = 2 + round % 5
            #expect(waitUntil { attempts.value >= target }, "round \(round): the retries stopped before the dispose")
            subscription.dispose()
            let atDispose = delivered.value
            #expect(waitUntil { scheduler.pending == 0 }, "round \(round): \(scheduler.pending) actions left scheduled")
            queue.queue.sync {}  // an action already running on the queue has returned
            #expect(delivered.value <= atDispose + 1, "round \(round): values after the dispose returned")
            #expect(terminals.value == 0, "round \(round): a disposed retry sent a terminal event")
            #expect(scheduler.pending == 0)
        }
    }

    /// Threads each subscribe, send a value and dispose, 100 times: the source is subscribed once
    /// per run and released (`live` back to 0), and each subscription receives its own value
    /// exactly once, and no value twice (a replayed one included). Then a last subscriber, of a
    /// fresh run, gets a value and the completion, once, and nothing replayed from before.
    @Test func shareReplaySubscribedAndDisposedFromManyThreadsDeliversEachSubscribersOwnValueOnceAndForgetsEndedRuns() {
        for round in 0..<20 {
            let source = Subject<Int>()
            let live = Box(0)
            let shared = source.onSubscribe { live.mutate { $0 += 1 } }.onDispose { live.mutate { $0 -= 1 } }.share(replay: 2)
            let notOnce = Box<[(value: Int, received: [Int])]>([])
            let returned = finishes("round \(round): four threads subscribing, sending, disposing") {
                runConcurrently(threads: 4) { thread in
                    for i in 0..<100 {
                        let value = thread * 1_000 + i
                        let received = Box<[Int]>([])
                        let d = shared.subscribe(next: { v in received.mutate { $0.append(v) } })
                        source.sendNext(value)
                        d.dispose()
                        let got = received.value
                        if got.filter({ $0 == value }).count != 1 || Set(got).count != got.count {
                            notOnce.mutate { $0.append((value, got)) }
                        }
                    }
                }
            }
            #expect(live.value == 0)
            let misses = notOnce.value
            #expect(misses.isEmpty, "round \(round): subscriptions that did not get their own value exactly once, e.g. \(misses.prefix(3))")
            let last = CompletenessRecorder()
            let subscription = shared.subscribe(next: { last.next($0) }, completed: { last.terminal() })
            finishes("round \(round): the last value and the completion") {
                source.sendNext(-1)
                source.sendCompleted()
            }
            last.expectComplete(sent: [[-1]], terminated: true)
            subscription.dispose()
            #expect(live.value == 0)
            if !returned || !misses.isEmpty { break }
        }
    }
}

/// A serial-queue scheduler that counts the actions scheduled and neither started nor cancelled.
final class PendingCountingScheduler: Scheduler {
    /// One action's claim: the first of its start and its cancellation counts it out.
    private final class Claim: Sendable {
        let taken = Atomic<Bool>(false)
    }

    private let base: SerialQueueScheduler
    private let count = Atomic<Int>(0)

    init(_ base: SerialQueueScheduler) {
        self.base = base
    }

    var pending: Int { count.load(ordering: .acquiring) }

    func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        track(action) { base.schedule($0) }
    }

    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        track(action) { base.schedule(after: delay, $0) }
    }

    var runsActionsOnItsOwnThreads: Bool { true }
    var isCurrent: Bool { base.isCurrent }

    private func track(
        _ action: @escaping @Sendable () -> Void,
        _ schedule: (@escaping @Sendable () -> Void) -> any Disposable
    ) -> any Disposable {
        let claim = Claim()
        count.add(1, ordering: .acquiringAndReleasing)
        let scheduled = schedule { [self] in
            countOut(claim)
            action()
        }
        return ActionDisposable { [self] in
            countOut(claim)
            scheduled.dispose()
        }
    }

    private func countOut(_ claim: Claim) {
        if !claim.taken.exchange(true, ordering: .acquiringAndReleasing) { count.subtract(1, ordering: .acquiringAndReleasing) }
    }
}
