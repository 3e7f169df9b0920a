import Testing
@testable import Ripple
import RippleTestSupport

@Suite(.leakChecked) struct SubjectConcurrencyTests {
    @Test(arguments: SubjectKind.allCases)
    func sixteenThreadsSendingReachEverySubscriberExactlyOnceWithoutOverlap(kind: SubjectKind) {
        let (signal, input) = kind.make()
        let threads = 16, perThread = 10_000
        let detectors = (0..<4).map { _ in OverlapDetector() }
        let received = (0..<4).map { _ in Box<[Int]>([]) }
        for index in 0..<4 {
            signal.subscribeNext { value in
                detectors[index].enter()
                received[index].mutate { $0.append(value) }
                detectors[index].leave()
            }
        }
        runConcurrently(threads: threads) { thread in
            for i in 0..<perThread { input.sendNext(thread * perThread + i + 1) }
        }
        for index in 0..<4 {
            #expect(detectors[index].overlapCount == 0)
            let values = received[index].value.filter { $0 != 0 }  // BehaviorSubject's default
            #expect(values.count == threads * perThread)
            #expect(Set(values).count == threads * perThread, "every value exactly once")
            let perSender = Dictionary(grouping: values) { ($0 - 1) / perThread }
            for (sender, sent) in perSender {
                #expect(sent == sent.sorted(), "sender \(sender)'s order kept")
            }
        }
    }

    @Test func aBehaviorSubscriberJoiningDuringSendsGetsTheCurrentValueThenEveryLaterOne() {
        for _ in 0..<50 {
            let behavior = BehaviorSubject(0)
            let count = 5_000
            let joined = Box<[Int]>([])
            runConcurrently(threads: 2) { thread in
                if thread == 0 {
                    for i in 1...count { behavior.sendNext(i) }
                } else {
                    for _ in 0..<100 { _ = behavior.value }  // let the sender get going
                    behavior.subscribeNext { value in joined.mutate { $0.append(value) } }
                }
            }
            let values = joined.value
            #expect(values.last == count)
            #expect(values == Array((values.first ?? 0)...count), "no gap and no duplicate")
        }
    }

    @Test func aReplaySubscriberJoiningDuringSendsGetsEveryValueOnceInOrder() {
        for _ in 0..<50 {
            let replay = ReplaySubject<Int>()
            let count = 5_000
            let joined = Box<[Int]>([])
            runConcurrently(threads: 2) { thread in
                if thread == 0 {
                    for i in 1...count { replay.sendNext(i) }
                } else {
                    replay.subscribeNext { value in joined.mutate { $0.append(value) } }
                }
            }
            #expect(joined.value == Array(1...count))
        }
    }

    @Test(arguments: SubjectKind.allCases)
    func subscribingAndDisposingWhileOthersSendKeepsTheGrammar(kind: SubjectKind) {
        for _ in 0..<20 {
            let (signal, input) = kind.make()
            let recorders = Box<[Recorder<Int>]>([])
            runConcurrently(threads: 6) { thread in
                switch thread {
                case 0, 1:
                    for i in 0..<2_000 { input.sendNext(i) }
                case 2:
                    for _ in 0..<1_500 { _ = 0 }
                    input.sendCompleted()
                default:
                    for _ in 0..<200 {
                        let r = Recorder<Int>()
                        recorders.mutate { $0.append(r) }
                        let d = signal.subscribe(r)
                        if Bool.random() { d.dispose() }
                    }
                }
            }
            for r in recorders.value {
                let events = r.events
                let terminals = events.filter(\.isTerminal).count
                #expect(terminals <= 1)
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
