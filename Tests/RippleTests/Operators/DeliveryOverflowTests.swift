import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// `deliver(on:bufferSize:whenFull:)`: the buffer's bound and each overflow policy.
@Suite(.leakChecked, .offThePool) struct DeliveryOverflowTests {
    @Test func dropOldestKeepsTheNewestValuesAndTheEnd() {
        let scheduler = TestScheduler()
        let recorder = Recorder<Int>()
        Signal.from(1...10).deliver(on: scheduler, bufferSize: 3, whenFull: .dropOldest).subscribe(recorder)
        scheduler.run()
        #expect(recorder.events == [.next(8), .next(9), .next(10), .completed])
    }

    @Test func dropNewestKeepsTheFirstValuesAndTheEnd() {
        let scheduler = TestScheduler()
        let recorder = Recorder<Int>()
        Signal.from(1...10).deliver(on: scheduler, bufferSize: 3, whenFull: .dropNewest).subscribe(recorder)
        scheduler.run()
        #expect(recorder.events == [.next(1), .next(2), .next(3), .completed])
    }

    @Test func failEndsTheSubscriptionWithTheOverflowErrorAndLetsGoOfUpstream() {
        let scheduler = TestScheduler()
        let source = Subject<Int>()
        let recorder = Recorder<Int>()
        source.deliver(on: scheduler, bufferSize: 3, whenFull: .fail).subscribe(recorder)
        for value in 1...4 { source.sendNext(value) }
        scheduler.run()
        #expect(recorder.events.count == 1)
        #expect(recorder.events.first?.error as? DeliveryOverflowError == DeliveryOverflowError(bufferSize: 3))
        #expect(source.storage.subscriberCount == 0, "the upstream subscription was disposed")
        source.sendNext(5)
        scheduler.run()
        #expect(recorder.events.count == 1, "nothing after the error")
    }

    @Test func waitNeverBlocksOnASchedulerThatOnlyRunsWhenTold() {
        let scheduler = TestScheduler()
        let recorder = Recorder<Int>()
        Signal.from(1...10).deliver(on: scheduler, bufferSize: 2).subscribe(recorder)  // .wait by default
        scheduler.run()
        #expect(recorder.values == Array(1...10))
        #expect(recorder.isCompleted)
    }

    @Test func waitSlowsAFastSenderToTheSchedulersPaceWithBoundedMemory() {
        let scheduler = SerialQueueScheduler(label: "slow")
        let bufferSize = 8, count = 2_000
        let timedOutBefore = RippleDebug.deliveryWaitsTimedOut
        let sent = Atomic<Int>(0), received = Atomic<Int>(0), mostInFlight = Atomic<Int>(0)
        let values = Box<[Int]>([])
        let done = Atomic<Bool>(false)
        let source = Subject<Int>()
        source.deliver(on: scheduler, bufferSize: bufferSize).subscribe(next: { value in
            values.mutate { $0.append(value) }
            received.add(1, ordering: .relaxed)
            usleep(20)
        }, completed: { done.store(true, ordering: .releasing) })
        for value in 1...count {
            sent.add(1, ordering: .relaxed)
            let inFlight = sent.load(ordering: .relaxed) - received.load(ordering: .relaxed)
            if inFlight > mostInFlight.load(ordering: .relaxed) { mostInFlight.store(inFlight, ordering: .relaxed) }
            source.sendNext(value)
        }
        source.sendCompleted()
        let ended = waitUntil { done.load(ordering: .acquiring) }
        #expect(ended)
        #expect(values.value == Array(1...count))
        // The buffer holds `bufferSize`, the drain delivers at most one more batch of that size,
        // and the value being sent: anything beyond would be an unbounded queue. A wait that ran
        // out at `waitLimit` (the queue's thread found no core for a second, on a busy machine)
        // lets one value in beyond the bound; waits counted anywhere in the process only loosen it.
        let most = mostInFlight.load(ordering: .relaxed)
        let timedOut = RippleDebug.deliveryWaitsTimedOut - timedOutBefore
        #expect(most <= 2 * bufferSize + 1 + timedOut, "\(most) values in flight, \(timedOut) waits ran out")
    }

    @Test func aSenderRunningOnTheSchedulerItselfDoesNotWaitForItself() {
        let scheduler = SerialQueueScheduler(label: "self")
        let recorder = Recorder<Int>()
        let source = Subject<Int>()
        let subscription = source.deliver(on: scheduler, bufferSize: 2).subscribe(recorder)
        scheduler.schedule {
            for value in 1...100 { source.sendNext(value) }
            source.sendCompleted()
        }
        #expect(waitUntil { recorder.isCompleted }, "a sender on the scheduler waited for its own drain")
        #expect(recorder.values == Array(1...100))
        subscription.dispose()
    }

    /// How many values the producers below send: a sender that waited for a drain queued behind
    /// it would wait `waitLimit` per value, far past the hang limit, so such a wait fails the test
    /// however slow or busy the machine.
    static let producerCount = 1_000

    /// Waits for `recorder` to complete with the values `1...count`.
    private func expectAllDelivered(
        _ recorder: Recorder<Int>, count: Int, _ what: Comment, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let completed = waitUntil { recorder.isCompleted }
        #expect(completed, what, sourceLocation: sourceLocation)
        #expect(recorder.values == Array(1...count), sourceLocation: sourceLocation)
    }

    @Test func aProducerOnTheSchedulersQueueOutsideItsActionsDoesNotWaitForItsOwnDrain() {
        let queue = DispatchQueue(label: "shared")
        let scheduler = SerialQueueScheduler(queue: queue)
        let recorder = Recorder<Int>()
        let source = Subject<Int>()
        let subscription = source.deliver(on: scheduler, bufferSize: 2).subscribe(recorder)
        queue.async {  // the queue's own code, not an action of the scheduler: the drain queues behind it
            for value in 1...Self.producerCount { source.sendNext(value) }
            source.sendCompleted()
        }
        expectAllDelivered(recorder, count: Self.producerCount, "a block on the scheduler's queue waited for a drain queued behind it")
        subscription.dispose()
    }

    @Test func aProducerOnAnotherSchedulerOfTheSameQueueDoesNotWaitForTheDrain() {
        let queue = DispatchQueue(label: "shared")
        let producing = SerialQueueScheduler(queue: queue), delivering = SerialQueueScheduler(queue: queue)
        let recorder = Recorder<Int>()
        let source = Subject<Int>()
        let subscription = source.deliver(on: delivering, bufferSize: 2).subscribe(recorder)
        producing.schedule {
            for value in 1...Self.producerCount { source.sendNext(value) }
            source.sendCompleted()
        }
        expectAllDelivered(recorder, count: Self.producerCount, "an action of one scheduler waited for a drain of another on the same queue")
        subscription.dispose()
    }

    @Test func aProducerOnAQueueTargetingTheSchedulersQueueDoesNotWaitForTheDrain() {
        let target = DispatchQueue(label: "target")
        let delivering = SerialQueueScheduler(queue: target)
        let producing = SerialQueueScheduler(queue: DispatchQueue(label: "inner", target: target))
        let recorder = Recorder<Int>()
        let source = Subject<Int>()
        let subscription = source.deliver(on: delivering, bufferSize: 2).subscribe(recorder)
        producing.schedule {  // holds `target` up: the drain runs only after this returns
            #expect(delivering.isCurrent)
            for value in 1...Self.producerCount { source.sendNext(value) }
            source.sendCompleted()
        }
        expectAllDelivered(recorder, count: Self.producerCount, "an action on a queue targeting the scheduler's waited for its drain")
        subscription.dispose()
    }

    @Test func aSenderHoldingTheTurnAnActionQueuedBeforeTheDrainNeedsDoesNotWaitForThatDrain() {
        // S (this thread) holds p's turn while its callback waits for room in the relay; the
        // relay's drain is queued behind an action that sends into p. Whichever of the two
        // starts waiting second sees the cycle, however their reads interleave.
        let queue = DispatchQueue(label: "occupied")
        let scheduler = SerialQueueScheduler(queue: queue)
        let p = Subject<Int>()
        let got = Box<[Int]>([])
        let subscription = p.deliver(on: scheduler, bufferSize: 1).subscribeNext { value in got.mutate { $0.append(value) } }
        for _ in 0..<Workload.size(20) {
            queue.async { usleep(2_000) }  // a plain block: no occupant recorded while it runs
            scheduler.schedule { p.sendNext(100) }  // queued ahead of the relay's drain
            let finished = finishes("a sender and an action waiting for each other") {
                p.sendNext(1)
                p.sendNext(2)
            }
            #expect(finished)
            if !finished { return }
        }
        #expect(waitUntil { got.value.count == 3 * Workload.size(20) })
        subscription.dispose()
    }

    @Test func aChainOfDeliveriesFedFromAnActionOfItsLastSchedulerDoesNotDeadlock() {
        // The action on `last` waits for room in the relay to `first`; `first`'s drain waits for
        // room in the relay to `last`, whose drain can only start once that action returns.
        let first = SerialQueueScheduler(label: "first"), last = SerialQueueScheduler(label: "last")
        let recorder = Recorder<Int>()
        let source = Subject<Int>()
        let subscription = source.deliver(on: first, bufferSize: 1).deliver(on: last, bufferSize: 1).subscribe(recorder)
        last.schedule {
            for value in 1...Self.producerCount { source.sendNext(value) }
            source.sendCompleted()
        }
        expectAllDelivered(recorder, count: Self.producerCount, "a relay waited for a drain held up by the thread waiting for it")
        subscription.dispose()
    }

    @Test func aDrainSendingBackUpstreamWhileTheSenderWaitsForRoomDoesNotDeadlock() {
        let scheduler = SerialQueueScheduler(label: "echo")
        let source = Subject<Int>()
        let received = Box<[Int]>([])
        let subscription = source.deliver(on: scheduler, bufferSize: 1).subscribeNext { value in
            received.mutate { $0.append(value) }
            if value > 0 { source.sendNext(-value) }  // back into the subject the sender is delivering
        }
        let finished = Atomic<Bool>(false)
        let sender = Thread {
            for value in 1...200 { source.sendNext(value) }
            finished.store(true, ordering: .releasing)
        }
        sender.start()
        let finishedAll = waitUntil { finished.load(ordering: .acquiring) && received.value.count == 400 }
        #expect(finishedAll, "deadlocked or lost: \(received.value.count) of 400")
        let values = received.value
        #expect(values.filter { $0 > 0 } == Array(1...200))
        #expect(Set(values.filter { $0 < 0 }) == Set((1...200).map { -$0 }))
        subscription.dispose()
    }

    @Test func disposingWakesASenderWaitingForRoom() {
        let scheduler = SerialQueueScheduler(label: "stuck")
        let release = DispatchSemaphore(value: 0)
        let source = Subject<Int>()
        let subscription = source.deliver(on: scheduler, bufferSize: 1).subscribeNext { value in
            if value == 1 { release.wait() }  // the drain is stuck in a callback: the buffer stays full
        }
        let returned = Atomic<Bool>(false)
        // Enough values that a sender left waiting (each wait ends only at `waitLimit`) would not
        // return before the hang limit: only the dispose's wake lets it return in time.
        let sender = Thread {
            for value in 1...1_000 { source.sendNext(value) }
            returned.store(true, ordering: .releasing)
        }
        sender.start()
        usleep(50_000)
        let returnedEarly = returned.load(ordering: .acquiring)
        #expect(!returnedEarly, "the sender should be waiting for room")
        subscription.dispose()
        let woke = waitUntil { returned.load(ordering: .acquiring) }
        #expect(woke, "dispose left the sender waiting")
        release.signal()
    }

    @Test func aBufferSizeBelowOneStopsWithAMessageNamingIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Signal<Int>.never.deliver(on: ImmediateScheduler.shared, bufferSize: 0)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("needs a bufferSize of at least 1, got 0"))
    }
}
