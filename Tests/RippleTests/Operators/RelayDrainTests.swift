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
