import Testing
@testable import Ripple
import RippleTestSupport

/// `RelayDrain`, the pure state machine of a `deliver(on:)` relay's drain: one test per transition.
@Suite(.leakChecked) struct RelayDrainTests {
    @Test func anIdleRelayAsksForADrainOfANewGeneration() {
        var drain = RelayDrain()
        #expect(drain.word == 0)
        let generation = drain.request()
        #expect(generation == 1)
        #expect(drain.phase == .scheduled)
        #expect(drain.word == RelayDrain.scheduledWord)
        #expect(drain.exists)
    }

    @Test func aRelayWithADrainAsksForNoOther() {
        var drain = RelayDrain()
        _ = drain.request()
        let whileScheduled = drain.request()
        #expect(whileScheduled == nil, "scheduled: the drain will find the event")
        let started = drain.start(by: 0x1000)
        #expect(started)
        let whileDraining = drain.request()
        #expect(whileDraining == nil, "draining: the drain will find the event")
        #expect(drain.generation == 1)
    }

    @Test func aScheduledDrainStartsOnItsThreadWhichTheGraphThenSees() {
        var drain = RelayDrain()
        _ = drain.request()
        let started = drain.start(by: 0x1000)
        #expect(started)
        #expect(drain.phase == .draining(by: 0x1000))
        #expect(drain.word == 0x1000)
    }

    @Test func aDrainThatRunsAfterItsRelayLetItGoDoesNotStart() {
        var drain = RelayDrain()
        _ = drain.request()
        drain.finish()  // dispose() before the drain ran
        let started = drain.start(by: 0x1000)
        #expect(started == false)
        #expect(drain.phase == .idle)
    }

    @Test func aFinishedDrainLeavesTheRelayIdleForTheNextGeneration() {
        var drain = RelayDrain()
        _ = drain.request()
        _ = drain.start(by: 0x1000)
        drain.finish()
        #expect(drain.phase == .idle)
        #expect(drain.word == 0)
        #expect(!drain.exists)
        let next = drain.request()
        #expect(next == 2)
    }

    @Test func onlyTheExistingDrainsDisposableIsKept() {
        var drain = RelayDrain()
        let first = drain.request()!
        #expect(drain.keeps(first))
        _ = drain.start(by: 0x1000)
        drain.finish()
        #expect(!drain.keeps(first), "that drain is over")
        let second = drain.request()!
        #expect(drain.keeps(second))
        #expect(!drain.keeps(first), "a late schedule of the first drain must not replace the second's disposable")
    }

    @Test func aLateScheduleOfAFinishedDrainDoesNotReplaceTheNextDrainsDisposable() {
        // The first drain runs inline and finishes inside `schedule`; before that call returns,
        // the next value asks for a second drain. The first `schedule`'s late return must not
        // store its disposable over the second's, or `dispose()` would leave the second scheduled.
        let scheduler = InlineOnceScheduler()
        let recorder = Recorder<Int>()
        let relay = DeliveryRelay(
            to: PassthroughSubscriber(forwardingTo: recorder, direct: nil, disposable: CompoundDisposable()),
            on: scheduler, bufferSize: 8, overflow: .wait)
        scheduler.afterFirstAction = { relay.enqueue(.next(2)) }
        relay.enqueue(.next(1))
        #expect(recorder.values == [1])
        #expect(scheduler.pending == 1, "the second drain is scheduled")
        relay.dispose()
        #expect(scheduler.pending == 0, "dispose() cancelled the second drain")
        scheduler.afterFirstAction = nil  // it captured the relay, which holds the scheduler
    }

    @Test func disposingARelayCancelsTheDrainScheduledAfterAnEarlierOneFinished() {
        let scheduler = TestScheduler()
        let source = Subject<Int>()
        let recorder = Recorder<Int>()
        let subscription = source.deliver(on: scheduler).subscribe(recorder)
        source.sendNext(1)
        scheduler.run()  // the first drain ran and finished
        source.sendNext(2)  // a second drain is scheduled
        subscription.dispose()
        #expect(scheduler.livePendingCount == 0, "nothing stays scheduled after dispose")
        scheduler.run()
        #expect(recorder.values == [1])
    }
}

/// Runs its first action at once, then `afterFirstAction`, before `schedule` returns; keeps
/// later actions pending (counted) until their disposable cancels them.
final class InlineOnceScheduler: Scheduler, @unchecked Sendable {  // used by one thread in one test
    var afterFirstAction: (() -> Void)?
    private(set) var pending = 0
    private var calls = 0

    func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        calls += 1
        if calls == 1 {
            action()
            afterFirstAction?()
            return ActionDisposable {}
        }
        pending += 1
        return ActionDisposable { [self] in pending -= 1 }
    }

    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        schedule(action)
    }

    var runsActionsOnItsOwnThreads: Bool { true }
}
