import Testing
@testable import Ripple
import RippleTestSupport

@Suite(.leakChecked) struct OperatorConcurrencyTests {
    @Test func mergeOfSignalsSendingOnFourThreadsDeliversEverythingThenOneCompletion() {
        for _ in 0..<20 {
            let subjects = (0..<4).map { _ in Subject<Int>() }
            let recorder = CompletenessRecorder()
            Signal.merge(subjects).subscribe(next: { recorder.next($0) }, completed: { recorder.terminal() })
            runConcurrently(threads: 4) { thread in
                for i in 0..<1_000 { subjects[thread].sendNext(thread * 1_000 + i) }
                subjects[thread].sendCompleted()
            }
            // Every value once, each source's in its order, never overlapping, then one completion.
            recorder.expectComplete(sent: (0..<4).map { thread in (0..<1_000).map { thread * 1_000 + $0 } }, terminated: true)
        }
    }

    @Test func flatMapWithInnerSignalsOnABackgroundSchedulerKeepsTheGrammar() {
        for _ in 0..<10 {
            let events = Box<[Event<Int>]>([])
            let done = Box(false)
            Signal.from(0..<200)
                .flatMap { Signal.from([$0, $0]).subscribe(on: BackgroundScheduler()) }
                .subscribe(
                    next: { v in events.mutate { $0.append(.next(v)) } },
                    error: { e in events.mutate { $0.append(.error(e)) } },
                    completed: { events.mutate { $0.append(.completed) }; done.value = true })
            #expect(waitUntil { done.value })
            let recorded = events.value
            #expect(recorded.count == 401)
            #expect(recorded.last == .completed)
            #expect(recorded.filter(\.isTerminal).count == 1)
        }
    }

    @Test func combineLatestFedFromTwoThreadsEndsWithBothLatestValues() {
        for _ in 0..<20 {
            let a = Subject<Int>(), b = Subject<Int>()
            let last = Box<(Int, Int)?>(nil)
            let completions = Box(0)
            a.combineLatest(b).subscribe(next: { pair in last.value = pair }, completed: { completions.mutate { $0 += 1 } })
            runConcurrently(threads: 2) { thread in
                let subject = thread == 0 ? a : b
                for i in 0...1_000 { subject.sendNext(i) }
                subject.sendCompleted()
            }
            #expect(last.value?.0 == 1_000)
            #expect(last.value?.1 == 1_000)
            #expect(completions.value == 1, "one completion, once both sources completed")
        }
    }

    @Test func shareSubscribedAndDisposedFromManyThreadsStaysConsistent() {
        for _ in 0..<20 {
            let source = Subject<Int>()
            let live = Box(0)
            let shared = source.onSubscribe { live.mutate { $0 += 1 } }.onDispose { live.mutate { $0 -= 1 } }.share()
            runConcurrently(threads: 4) { _ in
                for _ in 0..<100 {
                    let d = shared.subscribe(next: { _ in })
                    source.sendNext(1)
                    d.dispose()
                }
            }
            #expect(live.value == 0)
        }
    }
}
