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
}
