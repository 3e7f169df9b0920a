import Foundation
import Testing
@testable import Ripple
import RippleTestSupport

@Suite(.leakChecked) struct SubscriberTests {
    @Test func aValueSentFromInsideNextIsQueuedUntilTheCallbackReturns() {
        var log: [String] = []
        var subscriber: Subscriber<Int>!
        subscriber = Subscriber<Int>(next: { value in
            log.append("begin \(value)")
            if value == 1 { subscriber.sendNext(2) }
            log.append("end \(value)")
        })
        subscriber.sendNext(1)
        #expect(log == ["begin 1", "end 1", "begin 2", "end 2"])
        subscriber.dispose()  // its closure captures it
    }

    @Test func eventsAfterATerminalEventAreIgnored() {
        var log: [String] = []
        let subscriber = Subscriber<Int>(next: { log.append("\($0)") }, error: { _ in log.append("error") },
                                         completed: { log.append("completed") })
        subscriber.sendNext(1)
        subscriber.sendCompleted()
        subscriber.sendNext(2)
        subscriber.sendError(TestError())
        subscriber.sendCompleted()
        #expect(log == ["1", "completed"])
        #expect(subscriber.isDisposed)
    }

    @Test func disposeStopsDeliveryAndReleasesTheClosures() {
        final class Owner {}
        weak var weakOwner: Owner?
        let subscriber: Subscriber<Int>
        do {
            let owner = Owner()
            weakOwner = owner
            subscriber = Subscriber<Int>(next: { _ in _ = owner })
        }
        #expect(weakOwner != nil)
        subscriber.dispose()
        #expect(weakOwner == nil)
        #expect(subscriber.isDisposed)
    }

    @Test func aTerminalEventReleasesTheClosures() {
        final class Owner {}
        weak var weakOwner: Owner?
        let subscriber: Subscriber<Int>
        do {
            let owner = Owner()
            weakOwner = owner
            subscriber = Subscriber<Int>(completed: { _ = owner })
        }
        subscriber.sendCompleted()
        #expect(weakOwner == nil)
    }
}

@Suite(.leakChecked, .offThePool) struct SubscriberConcurrencyTests {
    @Test func fourSendingThreadsNeverOverlapCallbacksAndLoseNoValueThenOneCompletion() {
        for round in 0..<50 {
            let recorder = CompletenessRecorder()
            let subscriber = Subscriber<Int>(next: { recorder.next($0) }, completed: { recorder.terminal() })
            let step = Progress()
            // Every send returns: the four senders (step 0), then the completion (step 1).
            let returned = finishes("round \(round): four senders, then the completion",
                                    progress: step) {
                runConcurrently(threads: 4) { thread in
                    for i in 0..<1_000 { subscriber.sendNext(thread * 1_000_000 + i) }
                }
                step.advance()
                subscriber.sendCompleted()
            }
            recorder.expectComplete(
                sent: (0..<4).map { thread in (0..<1_000).map { thread * 1_000_000 + $0 } }, terminated: true)
            if !returned { break }
        }
    }

    /// Four threads each send 50 values, then a terminal event (completed on even threads, an
    /// error tagged with the thread on odd ones), then one more value. One terminal event is
    /// accepted: it arrives exactly once, last; each thread's values accepted before it (a
    /// prefix of what it sent) arrive exactly once, in order — all 50 of the winning thread's,
    /// whose sends each returned after delivery; the values sent after a terminal event never.
    @Test func aRaceOfTerminalEventsDeliversExactlyOneLastAfterEveryValueAcceptedBeforeIt() {
        for round in 0..<200 {
            let recorder = CompletenessRecorder()
            let winner = Box<String?>(nil)
            let subscriber = Subscriber<Int>(
                next: { recorder.next($0) },
                error: { error in winner.value = (error as? TestError)?.message; recorder.terminal() },
                completed: { winner.value = "completed"; recorder.terminal() })
            let returned = finishes("round \(round): four threads racing terminal events") {
                runConcurrently(threads: 4) { thread in
                    for i in 0..<50 { subscriber.sendNext(thread * 1_000 + i) }
                    if thread % 2 == 0 { subscriber.sendCompleted() } else { subscriber.sendError(TestError("\(thread)")) }
                    subscriber.sendNext(thread * 1_000 + 999)
                }
            }
            let received = recorder.received
            let late = received.filter { $0 % 1_000 == 999 }
            #expect(late.isEmpty, "round \(round): values sent after their thread's terminal event arrived: \(late)")
            let accepted = (0..<4).map { thread in
                let count = received.filter { $0 / 1_000 == thread && $0 % 1_000 < 50 }.map { $0 % 1_000 + 1 }.max() ?? 0
                return (0..<count).map { thread * 1_000 + $0 }
            }
            recorder.expectComplete(sent: accepted, terminated: true)
            let winners = winner.value == "completed" ? [0, 2] : winner.value.flatMap(Int.init).map { [$0] } ?? []
            #expect(winners.contains { accepted[$0].count == 50 },
                    "round \(round): the winner (\(winner.value ?? "none")) had all 50 values delivered first; got \(accepted.map(\.count))")
            if !returned { break }
        }
    }
}
