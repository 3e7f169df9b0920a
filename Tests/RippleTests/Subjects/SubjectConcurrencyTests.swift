import Foundation
import Testing
@testable import Ripple
import RippleTestSupport

@Suite(.leakChecked) struct SubjectConcurrencyTests {
    @Test(arguments: SubjectKind.allCases)
    func sixteenThreadsSendingReachEverySubscriberExactlyOnceWithoutOverlapThenOneCompletion(kind: SubjectKind) {
        let (signal, input) = kind.make()
        let threads = 16, perThread = Workload.size(10_000)
        let recorders = (0..<4).map { _ in CompletenessRecorder() }
        for recorder in recorders {
            signal.subscribe(next: { value in if value != 0 { recorder.next(value) } },  // 0: BehaviorSubject's default
                             error: { _ in recorder.terminal() },
                             completed: { recorder.terminal() })
        }
        runConcurrently(threads: threads) { thread in
            for i in 0..<perThread { input.sendNext(thread * perThread + i + 1) }
        }
        input.sendCompleted()
        let sent = (0..<threads).map { thread in (0..<perThread).map { thread * perThread + $0 + 1 } }
        for recorder in recorders { recorder.expectComplete(sent: sent, terminated: true) }
    }

    @Test func aBehaviorSubscriberJoiningDuringSendsGetsTheCurrentValueThenEveryLaterOne() {
        for _ in 0..<50 {
            let behavior = BehaviorSubject(0)
            let count = 5_000
            let joined = Box<[Int]>([])
            let completions = Box(0)
            runConcurrently(threads: 2) { thread in
                if thread == 0 {
                    for i in 1...count { behavior.sendNext(i) }
                } else {
                    while behavior.value < 100 { sched_yield() }  // join once the sender is going
                    behavior.subscribe(next: { value in joined.mutate { $0.append(value) } },
                                       completed: { completions.mutate { $0 += 1 } })
                }
            }
            behavior.sendCompleted()
            let values = joined.value
            #expect(values.last == count)
            #expect(values == Array((values.first ?? 0)...count), "no gap and no duplicate")
            #expect(completions.value == 1, "the completion arrived exactly once")
        }
    }

    @Test func aReplaySubscriberJoiningDuringSendsGetsEveryValueOnceInOrder() {
        for _ in 0..<50 {
            let replay = ReplaySubject<Int>()
            let count = 5_000
            let joined = Box<[Int]>([])
            let completions = Box(0)
            runConcurrently(threads: 2) { thread in
                if thread == 0 {
                    for i in 1...count { replay.sendNext(i) }
                } else {
                    replay.subscribe(next: { value in joined.mutate { $0.append(value) } },
                                     completed: { completions.mutate { $0 += 1 } })
                }
            }
            replay.sendCompleted()
            #expect(joined.value == Array(1...count))
            #expect(completions.value == 1, "the completion arrived exactly once")
        }
    }

    @Test(arguments: SubjectKind.allCases)
    func subscribingAndDisposingWhileOthersSendKeepsTheGrammar(kind: SubjectKind) {
        for _ in 0..<20 {
            let (signal, input) = kind.make()
            let recorders = Box<[(recorder: Recorder<Int>, kept: Bool)]>([])
            let sent = Box(0)
            runConcurrently(threads: 6) { thread in
                switch thread {
                case 0, 1:
                    for i in 0..<2_000 {
                        input.sendNext(i)
                        sent.mutate { $0 += 1 }
                    }
                case 2:
                    while sent.value < 1_500 { sched_yield() }  // complete while the others still send
                    input.sendCompleted()
                default:
                    for _ in 0..<200 {
                        let r = Recorder<Int>()
                        let d = signal.subscribe(r)
                        let kept = Bool.random()
                        if !kept { d.dispose() }
                        recorders.mutate { $0.append((r, kept)) }
                    }
                }
            }
            for (r, kept) in recorders.value {
                let events = r.events
                let terminals = events.filter(\.isTerminal).count
                // A kept subscription gets the accepted completion exactly once, last; a disposed
                // one at most once.
                #expect(kept ? terminals == 1 : terminals <= 1)
                if terminals == 1 { #expect(events.last?.isTerminal == true) }
            }
            #expect(subscriberCount(signal) == 0)
        }
    }

    @Test(arguments: SubjectKind.allCases)
    func racingTerminalEventsDeliverExactlyOne(kind: SubjectKind) {
        for _ in 0..<200 {
            let (signal, input) = kind.make()
            let r = Recorder<Int>()
            signal.subscribe(r)
            runConcurrently(threads: 4) { thread in
                input.sendNext(thread)
                if thread % 2 == 0 { input.sendCompleted() } else { input.sendError(TestError()) }
                input.sendNext(100)
            }
            let events = r.events
            #expect(events.filter(\.isTerminal).count == 1)
            #expect(events.last?.isTerminal == true)
            #expect(!events.contains(.next(100)))
        }
    }

    @Test func callbacksCanCallBackIntoTheSubjectFromManyThreadsWithoutDeadlock() {
        let behavior = BehaviorSubject(0)
        let total = Box(0)
        let subscription = behavior.subscribeNext { value in
            _ = behavior.value
            if value % 100 == 1 {
                let d = behavior.subscribeNext { _ in }
                d.dispose()
            }
            total.mutate { $0 += 1 }
        }
        runConcurrently(threads: 8) { thread in
            for i in 0..<1_000 { behavior.sendNext(thread * 1_000 + i) }
        }
        #expect(total.value == 8_001)
        subscription.dispose()  // the closure captures the subject that holds it
    }
}
