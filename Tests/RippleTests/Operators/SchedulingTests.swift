import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

@Suite(.leakChecked) struct SchedulingOperatorTests {
    @Test func subscribeOnRunsTheSubscribeClosureOnTheScheduler() {
        let scheduler = TestScheduler()
        let ranOn = Box<[Bool]>([])
        let recorder = Recorder<Int>()
        Signal<Int> { subscriber in
            ranOn.mutate { $0.append(Schedulers.current === scheduler) }
            subscriber.sendNext(1)
            subscriber.sendCompleted()
            return nil
        }.subscribe(on: scheduler).subscribe(recorder)
        #expect(ranOn.value.isEmpty)
        scheduler.run()
        #expect(ranOn.value == [true])
        #expect(recorder.events == [.next(1), .completed])
    }

    @Test func disposingBeforeTheScheduledSubscriptionMeansNoSubscription() {
        let scheduler = TestScheduler()
        let subscribed = Box(false)
        let d = Signal<Int> { _ in subscribed.value = true; return nil }.subscribe(on: scheduler).subscribe()
        d.dispose()
        scheduler.run()
        #expect(!subscribed.value)
    }

    @Test func disposingAfterSubscribeOnDisposesUpstream() {
        let scheduler = TestScheduler()
        let cleaned = Box(false)
        let d = Signal<Int> { subscriber in
            ActionDisposable {
                withExtendedLifetime(subscriber) {}  // a source that could still send
                cleaned.value = true
            }
        }.subscribe(on: scheduler).subscribe()
        scheduler.run()
        #expect(!cleaned.value)
        d.dispose()
        #expect(cleaned.value)
    }

    @Test func deliverOnTestSchedulerDeliversWhenTheSchedulerRuns() {
        let scheduler = TestScheduler()
        let recorder = Recorder<Int>()
        let onScheduler = Box<[Bool]>([])
        Signal.from([1, 2, 3]).deliver(on: scheduler).subscribe(next: { value in
            onScheduler.mutate { $0.append(Schedulers.current === scheduler) }
            recorder.sendNext(value)
        }, completed: { recorder.sendCompleted() })
        #expect(recorder.events.isEmpty)
        scheduler.run()
        #expect(recorder.events == [.next(1), .next(2), .next(3), .completed])
        #expect(onScheduler.value == [true, true, true])
    }

    @Test func disposingDropsWhatIsStillQueued() {
        let scheduler = TestScheduler()
        let recorder = Recorder<Int>()
        let d = Signal.from([1, 2, 3]).deliver(on: scheduler).subscribe(recorder)
        d.dispose()
        scheduler.run()
        #expect(recorder.events.isEmpty)
    }

    @Test func errorsAreDeliveredOnTheSchedulerToo() {
        let scheduler = TestScheduler()
        let recorder = Recorder<Int>()
        Signal<Int>.error(TestError()).deliver(on: scheduler).subscribe(recorder)
        #expect(recorder.events.isEmpty)
        scheduler.run()
        #expect(recorder.events == [.error(TestError())])
    }
}

@Suite(.leakChecked, .offThePool) struct SchedulingConcurrencyTests {
    static let schedulers: [@Sendable () -> any Scheduler] = [
        { ImmediateScheduler.shared },
        { SerialQueueScheduler(label: "deliver") },
        { BackgroundScheduler() },
    ]

    @Test(arguments: 0..<3)
    func deliverOnDeliversEveryValueOnceInOrderWithoutOverlapThenOneCompletion(schedulerIndex: Int) {
        for round in 0..<20 {
            let scheduler = Self.schedulers[schedulerIndex]()
            let recorder = CompletenessRecorder()
            let scope = RippleDebug.currentScope
            // The subscribe runs the producer, which sends 2,000 values and the completion: it returns.
            let returned = finishes("round \(round): subscribing, which sends 2,000 values and the completion") {
                RippleDebug.$currentScope.withValue(scope) {  // the subscription counts for the leak check
                    _ = Signal<Int> { subscriber in
                        for i in 0..<2_000 { subscriber.sendNext(i) }
                        subscriber.sendCompleted()
                        return nil
                    }.deliver(on: scheduler).subscribe(next: { recorder.next($0) }, completed: { recorder.terminal() })
                }
            }
            #expect(waitUntil { recorder.terminalCount > 0 }, "round \(round): the completion never arrived")
            recorder.expectComplete(sent: [Array(0..<2_000)], terminated: true)
            if !returned { break }
        }
    }

    @Test func deliverOnBackgroundKeepsEachSendersOrderWithManySendersThenOneCompletion() {
        for round in 0..<20 {
            let recorder = CompletenessRecorder()
            var sink: (any SubscriberProtocol<Int> & Sendable)?
            let d = Signal<Int> { subscriber in sink = subscriber; return nil }
                .deliver(on: BackgroundScheduler())
                .subscribe(next: { recorder.next($0) }, completed: { recorder.terminal() })
            let upstream = sink!
            let step = Progress()
            // Every send returns: the four senders (step 0), then the completion (step 1).
            let returned = finishes("round \(round): four senders, then the completion",
                                    progress: step) {
                runConcurrently(threads: 4) { thread in
                    for i in 0..<500 { upstream.sendNext(thread * 10_000 + i) }
                }
                step.advance()
                upstream.sendCompleted()
            }
            #expect(waitUntil { recorder.terminalCount > 0 }, "round \(round): the completion never arrived")
            recorder.expectComplete(sent: (0..<4).map { thread in (0..<500).map { thread * 10_000 + $0 } }, terminated: true)
            d.dispose()
            if !returned { break }
        }
    }

    /// The drain hands its emptied batch back to the queue (one value at a time allocates no
    /// buffer): single values each sent once everything before arrived, bursts, and two threads
    /// at once all arrive once, in each sender's order, on every kind of scheduler.
    @Test(arguments: 0..<3)
    func deliverOnReusingItsBufferDeliversSingleValuesAndBurstsOnceInOrder(schedulerIndex: Int) {
        let recorder = CompletenessRecorder()
        let arrived = Atomic<Int>(0)
        var sink: (any SubscriberProtocol<Int> & Sendable)?
        let d = Signal<Int> { subscriber in sink = subscriber; return nil }
            .deliver(on: Self.schedulers[schedulerIndex]())
            .subscribe(next: { recorder.next($0); arrived.add(1, ordering: .releasing) }, completed: { recorder.terminal() })
        let upstream = sink!
        let finished = finishes("single values, bursts and two senders") {
            var sent = 0
            for round in 0..<20 {
                for i in 0..<10 {  // one at a time: everything sent before has arrived
                    #expect(waitUntil { arrived.load(ordering: .acquiring) == sent })
                    upstream.sendNext(round * 1_000_000 + i)
                    sent += 1
                }
                for i in 0..<500 { upstream.sendNext(round * 1_000_000 + 1_000 + i) }
                runConcurrently(threads: 2) { thread in
                    for i in 0..<200 { upstream.sendNext(-(thread * 100_000_000 + round * 1_000 + i) - 1) }
                }
                sent += 900
            }
            upstream.sendCompleted()
        }
        #expect(finished)
        #expect(waitUntil { recorder.terminalCount > 0 }, "the completion never arrived")
        var singlesAndBursts: [Int] = []  // this thread's values, in order
        var threads: [[Int]] = [[], []]
        for round in 0..<20 {
            for i in 0..<10 { singlesAndBursts.append(round * 1_000_000 + i) }
            for i in 0..<500 { singlesAndBursts.append(round * 1_000_000 + 1_000 + i) }
            for thread in 0..<2 {
                for i in 0..<200 { threads[thread].append(-(thread * 100_000_000 + round * 1_000 + i) - 1) }
            }
        }
        recorder.expectComplete(sent: [singlesAndBursts] + threads, terminated: true)
        d.dispose()
    }

    /// What the relay keeps between drains: after one value the buffer it drained (no
    /// allocation for the next), after a burst of 500 at most `reusedBatchCapacity` slots,
    /// after dispose nothing.
    @Test func deliverOnKeepsOneSmallBufferBetweenDrainsAndNothingAfterDispose() {
        let scheduler = TestScheduler()
        let recorder = Recorder<Int>()
        let relayBox = Box<DeliveryRelay<Int>?>(nil)
        let d = Signal<Int> { downstream in
            let relay = DeliveryRelay(to: downstream, on: scheduler, bufferSize: 1_024, overflow: .wait)
            downstream.disposable.add(relay)
            relayBox.value = relay
            return nil
        }.subscribe(recorder)
        let relay = relayBox.value!
        let limit = DeliveryRelay<Int>.reusedBatchCapacity
        func keptCapacity() -> Int { relay.state.withLock { $0.queue.storage.capacity } }

        relay.enqueue(.next(1))
        scheduler.run()
        #expect(recorder.values == [1])
        let kept = keptCapacity()
        #expect(kept >= 1 && kept <= limit, "the drained buffer waits for the next value")
        relay.enqueue(.next(2))
        #expect(keptCapacity() == kept, "the next value goes into it")
        scheduler.run()

        for i in 0..<500 { relay.enqueue(.next(i)) }
        scheduler.run()
        #expect(recorder.values.count == 502)
        #expect(keptCapacity() <= limit, "a burst's large buffer is not kept")

        relay.enqueue(.next(3))
        d.dispose()
        #expect(keptCapacity() == 0)
        scheduler.run()
        #expect(recorder.values.count == 502)
        relayBox.value = nil
    }
}
