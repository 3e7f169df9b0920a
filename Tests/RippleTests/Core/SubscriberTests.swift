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

@Suite(.leakChecked) struct SubscriberConcurrencyTests {
    @Test func fourSendingThreadsNeverOverlapCallbacksAndLoseNoValueThenOneCompletion() {
        for _ in 0..<50 {
            let recorder = CompletenessRecorder()
            let subscriber = Subscriber<Int>(next: { recorder.next($0) }, completed: { recorder.terminal() })
            runConcurrently(threads: 4) { thread in
                for i in 0..<1_000 { subscriber.sendNext(thread * 1_000_000 + i) }
            }
            subscriber.sendCompleted()
            recorder.expectComplete(
                sent: (0..<4).map { thread in (0..<1_000).map { thread * 1_000_000 + $0 } }, terminated: true)
        }
    }

    @Test func aRaceOfTerminalEventsDeliversExactlyOne() {
        for _ in 0..<200 {
            let terminals = Box(0)
            let nextsAfterTerminal = Box(0)
            let ended = Box(false)
            let subscriber = Subscriber<Int>(
                next: { _ in if ended.value { nextsAfterTerminal.mutate { $0 += 1 } } },
                error: { _ in ended.value = true; terminals.mutate { $0 += 1 } },
                completed: { ended.value = true; terminals.mutate { $0 += 1 } })
            runConcurrently(threads: 4) { thread in
                for i in 0..<50 { subscriber.sendNext(i) }
                if thread % 2 == 0 { subscriber.sendCompleted() } else { subscriber.sendError(TestError()) }
                subscriber.sendNext(99)
            }
            #expect(terminals.value == 1)
            #expect(nextsAfterTerminal.value == 0)
        }
    }
}
