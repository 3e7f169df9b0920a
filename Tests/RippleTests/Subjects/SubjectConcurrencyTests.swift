import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

@Suite(.leakChecked, .offThePool) struct SubjectConcurrencyTests {
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
        let step = Progress()
        // Every send returns: the sixteen senders (step 0), then the completion (step 1).
        finishes("sixteen senders, then the completion", progress: step) {
            runConcurrently(threads: threads) { thread in
                for i in 0..<perThread { input.sendNext(thread * perThread + i + 1) }
            }
            step.advance()
            input.sendCompleted()
        }
        let sent = (0..<threads).map { thread in (0..<perThread).map { thread * perThread + $0 + 1 } }
        for recorder in recorders { recorder.expectComplete(sent: sent, terminated: true) }
    }

    @Test func aBehaviorSubscriberJoiningDuringSendsGetsTheCurrentValueThenEveryLaterOneThenOneCompletion() {
        for round in 0..<50 {
            let behavior = BehaviorSubject(0)
            let count = 5_000
            let recorder = CompletenessRecorder()
            let step = Progress()
            // The send loop and the subscribe (step 0), then the completion (step 1), all return.
            let returned = finishes("round \(round): a sender and a joining subscriber, then the completion",
                                    progress: step) {
                runConcurrently(threads: 2) { thread in
                    if thread == 0 {
                        for i in 1...count { behavior.sendNext(i) }
                    } else {
                        while behavior.value < 100 { sched_yield() }  // join once the sender is going
                        behavior.subscribe(next: { recorder.next($0) }, error: { _ in recorder.terminal() },
                                           completed: { recorder.terminal() })
                    }
                }
                step.advance()
                behavior.sendCompleted()
            }
            let values = recorder.received
            #expect(values.last == count)
            #expect((values.first ?? 0) >= 100, "round \(round): the first value is the current one when it joined")
            // From the current value on: no gap, no duplicate, no overlap, then the completion exactly once, last.
            recorder.expectComplete(sent: [Array((values.first ?? 1)...count)], terminated: true)
            if !returned { break }
        }
    }

    @Test func aReplaySubscriberJoiningDuringSendsGetsEveryValueOnceInOrderThenOneCompletion() {
        for round in 0..<50 {
            let replay = ReplaySubject<Int>()
            let count = 5_000
            let recorder = CompletenessRecorder()
            let sentSoFar = Atomic<Int>(0)
            let step = Progress()
            // The send loop and the subscribe (step 0), then the completion (step 1), all return.
            let returned = finishes("round \(round): a sender and a joining subscriber, then the completion",
                                    progress: step) {
                runConcurrently(threads: 2) { thread in
                    if thread == 0 {
                        for i in 1...count {
                            replay.sendNext(i)
                            sentSoFar.store(i, ordering: .relaxed)
                        }
                    } else {
                        while sentSoFar.load(ordering: .relaxed) < 100 { sched_yield() }  // join once the sender is going
                        replay.subscribe(next: { recorder.next($0) }, error: { _ in recorder.terminal() },
                                         completed: { recorder.terminal() })
                    }
                }
                step.advance()
                replay.sendCompleted()
            }
            #expect(recorder.received == Array(1...count))
            recorder.expectComplete(sent: [Array(1...count)], terminated: true)
            if !returned { break }
        }
    }

    /// Two senders (values `sender * 10_000 + i`) while a third completes the subject midway and
    /// three threads subscribe and dispose. A witness subscribed first gets each sender's values
    /// accepted before the completion (a prefix of what it sent: at least the 1,500 sends that
    /// had returned) exactly once, in order, then the completion. Every churned subscription
    /// gets a gapless run of each sender's accepted values, never a duplicate; a kept one gets
    /// them up to each sender's last accepted value, then the completion exactly once, last; a
    /// disposed one at most one terminal event, last.
    @Test(arguments: SubjectKind.allCases)
    func subscribingAndDisposingWhileOthersSendKeepsTheGrammarAndLosesNothing(kind: SubjectKind) {
        for round in 0..<20 {
            let (signal, input) = kind.make()
            let witness = CompletenessRecorder()
            signal.subscribe(next: { value in if value != 0 { witness.next(value) } },  // 0: BehaviorSubject's default
                             error: { _ in witness.terminal() }, completed: { witness.terminal() })
            let recorders = Box<[(recorder: Recorder<Int>, kept: Bool)]>([])
            let sent = Box(0)
            let returned = finishes("round \(round): senders, a completion, subscribers coming and going") {
                runConcurrently(threads: 6) { thread in
                    switch thread {
                    case 0, 1:
                        for i in 0..<2_000 {
                            input.sendNext((thread + 1) * 10_000 + i)
                            sent.mutate { $0 += 1 }
                        }
                    case 2:
                        while sent.value < 1_500 { sched_yield() }  // complete while the others still send
                        input.sendCompleted()
                    default:
                        for _ in 0..<200 {
                            let r = Recorder<Int>()
                            let d = signal.subscribe(r)
                            // One in four is kept: each joins as racily as the rest, but every
                            // kept one gets every later value, which is most of the test's cost.
                            let kept = Int.random(in: 0..<4) == 0
                            if !kept { d.dispose() }
                            recorders.mutate { $0.append((r, kept)) }
                        }
                    }
                }
            }
            // What was accepted, from the witness: each sender's first `accepted[sender]` values.
            let bySender = Self.sequencesBySender(witness.received)
            let accepted = (1...2).map { sender in (bySender[sender]?.max()).map { $0 + 1 } ?? 0 }
            #expect(accepted.reduce(0, +) >= 1_500, "round \(round): the sends that returned before the completion were accepted")
            witness.expectComplete(sent: (1...2).map { sender in (0..<accepted[sender - 1]).map { sender * 10_000 + $0 } },
                                   terminated: true)
            var broken: [String] = []
            for (r, kept) in recorders.value {
                let events = r.events
                let terminals = events.filter(\.isTerminal).count
                // A kept subscription gets the accepted completion exactly once, last; a disposed
                // one at most once.
                #expect(kept ? terminals == 1 : terminals <= 1)
                if terminals == 1 { #expect(events.last?.isTerminal == true) }
                if let problem = Self.runProblem(in: events, accepted: accepted, kept: kept) { broken.append(problem) }
            }
            #expect(broken.isEmpty, "round \(round): \(broken.count) subscriptions, e.g. \(broken.prefix(3))")
            #expect(subscriberCount(signal) == 0)
            if !returned { break }
        }
    }

    /// Each sender's sequences (`value % 10_000`) by sender (`value / 10_000`), in arrival order.
    static func sequencesBySender(_ values: [Int]) -> [Int: [Int]] {
        Dictionary(grouping: values) { $0 / 10_000 }.mapValues { $0.map { $0 % 10_000 } }
    }

    /// What is wrong with a churned subscription's values, if anything: each sender's
    /// (`value / 10_000`, 1 or 2) sequences must run without a gap or a duplicate within the
    /// `accepted` ones and, for a kept subscription, on to the last accepted one.
    static func runProblem(in events: [Event<Int>], accepted: [Int], kept: Bool) -> String? {
        var last: [Int?] = [nil, nil]
        for event in events {
            guard case .next(let value) = event, value != 0 else { continue }  // 0: BehaviorSubject's default
            let sender = value / 10_000, sequence = value % 10_000
            guard sender == 1 || sender == 2, sequence < accepted[sender - 1] else { return "\(value) was never accepted" }
            if let previous = last[sender - 1], sequence != previous + 1 { return "\(value) after sequence \(previous)" }
            last[sender - 1] = sequence
        }
        if kept {
            for sender in 1...2 where last[sender - 1].map({ $0 != accepted[sender - 1] - 1 }) == true {
                return "kept, but sender \(sender)'s values stop at \(last[sender - 1]!) of \(accepted[sender - 1])"
            }
        }
        return nil
    }

    /// Four threads each send a value, then a terminal event (completed on even threads, an
    /// error tagged with the thread on odd ones), then 100. Exactly one terminal event arrives,
    /// last; the values accepted before it arrive once each — the winning thread's among them,
    /// as its send returned after delivery — and 100 never.
    @Test(arguments: SubjectKind.allCases)
    func racingTerminalEventsDeliverExactlyOneLastAfterTheValuesAcceptedBeforeIt(kind: SubjectKind) {
        for round in 0..<200 {
            let (signal, input) = kind.make()
            let r = Recorder<Int>()
            signal.subscribe(r)
            let returned = finishes("round \(round): four threads racing terminal events") {
                runConcurrently(threads: 4) { thread in
                    input.sendNext(thread + 1)
                    if thread % 2 == 0 { input.sendCompleted() } else { input.sendError(TestError("\(thread)")) }
                    input.sendNext(100)
                }
            }
            let events = r.events
            #expect(events.filter(\.isTerminal).count == 1)
            #expect(events.last?.isTerminal == true)
            #expect(!events.contains(.next(100)))
            #expect(Array(events.prefix(kind.initial.count)) == kind.initial)
            let values = events.dropFirst(kind.initial.count).compactMap(\.value)
            #expect(Set(values).count == values.count && Set(values).isSubset(of: 1...4), "round \(round): \(values)")
            let winners: [Int] = switch events.last {
            case .completed?: [1, 3]  // threads 0 and 2 sent 1 and 3
            case .error(let error as TestError)?: Int(error.message).map { [$0 + 1] } ?? []
            default: []
            }
            #expect(winners.contains { values.contains($0) }, "round \(round): the winner's value (\(winners)) is missing from \(values)")
            if !returned { break }
        }
    }

    /// Callbacks that read the subject and subscribe to it from inside, on eight sending
    /// threads: no deadlock, every send returns, every value arrives exactly once in its
    /// sender's order, callbacks never overlap, then the completion exactly once.
    @Test func callbacksCanCallBackIntoTheSubjectFromManyThreadsWithoutDeadlockOrLoss() {
        let behavior = BehaviorSubject(0)
        let total = Box(0)
        let recorder = CompletenessRecorder()
        let subscription = behavior.subscribe(next: { value in
            recorder.next(value)
            _ = behavior.value
            if value % 100 == 1 {
                let d = behavior.subscribeNext { _ in }
                d.dispose()
            }
            total.mutate { $0 += 1 }
        }, completed: { recorder.terminal() })
        let step = Progress()
        // The eight senders (step 0), then the completion (step 1), all return.
        finishes("eight senders into a subject whose callback calls back, then the completion",
                 progress: step) {
            runConcurrently(threads: 8) { thread in
                for i in 0..<1_000 { behavior.sendNext(thread * 1_000 + i + 1) }
            }
            step.advance()
            behavior.sendCompleted()
        }
        #expect(total.value == 8_001)
        // The initial 0 first, then each thread's values.
        recorder.expectComplete(sent: [[0]] + (0..<8).map { thread in (0..<1_000).map { thread * 1_000 + $0 + 1 } },
                                terminated: true)
        subscription.dispose()  // the closure captures the subject that holds it
    }
}
