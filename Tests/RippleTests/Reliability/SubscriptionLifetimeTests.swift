import Foundation
import Testing
@testable import Ripple
import RippleTestSupport

/// When a subscription ends on its own, and how the leak counter attributes it.
@Suite(.leakChecked, .offThePool) struct SubscriptionLifetimeTests {
    @Test func aScopeCountsOnlyTheSubscriptionsCreatedInsideIt() {
        let subject = Subject<Int>()
        let outside = subject.subscribeNext { _ in }
        let scope = RippleDebug.Scope()
        let inside = RippleDebug.counting(in: scope) {
            subject.map { $0 + 1 }.subscribeNext { _ in }  // a relay and the final subscriber
        }
        #expect(scope.liveSubscriptions == 3)  // + the subject's subscription for the relay
        inside.dispose()
        #expect(scope.liveSubscriptions == 0)
        outside.dispose()
    }

    @Test func aScopeSeesALeakAndItsRepair() {
        let scope = RippleDebug.Scope()
        let subject = Subject<Int>()
        var subscription: (any Disposable)?
        RippleDebug.counting(in: scope) {
            // The closure captures the subject that holds it: a cycle, alive until disposed.
            subscription = subject.subscribeNext { _ in _ = subject }
        }
        #expect(scope.liveSubscriptions == 1)
        subscription?.dispose()
        subscription = nil  // a subscription counts until it is deinitialized
        #expect(scope.liveSubscriptions == 0)
    }

    @Test func childTasksInheritTheScopeButOtherThreadsDoNot() async {
        let scope = RippleDebug.Scope()
        let subject = Subject<Int>()
        let fromThread = Box<(any Disposable)?>(nil)
        // Kept in a box, not returned as the task's value: a finished task holds its value until
        // its executor lets go of the task, which may come after this test's next line.
        let fromTask = Box<(any Disposable)?>(nil)
        await RippleDebug.counting(in: scope) {
            await runOnThread(stackSize: 1 << 20) {
                fromThread.value = subject.subscribeNext { _ in }
            }
            await Task { fromTask.value = subject.subscribeNext { _ in } }.value
        }
        #expect(scope.liveSubscriptions == 1)
        fromTask.value?.dispose()
        fromTask.value = nil  // a subscription counts until it is deinitialized
        fromThread.value?.dispose()
        #expect(scope.liveSubscriptions == 0)
    }

    @Test func aSubscriptionWhoseProducerLetsGoOfItsSubscriberIsDisposed() {
        let cleanups = Box(0)
        let signal = Signal<Int> { subscriber in
            subscriber.sendNext(1)  // and never again: the subscriber is not kept
            return ActionDisposable { cleanups.mutate { $0 += 1 } }
        }
        let recorder = Recorder<Int>()
        let subscription = signal.subscribe(recorder)
        #expect(recorder.events == [.next(1)])  // disposal sends no terminal event
        #expect(cleanups.value == 1)
        #expect(subscription.isDisposed)
    }

    @Test func aProducerThatKeepsItsSubscriberKeepsTheSubscription() {
        let clock = TestScheduler()
        let recorder = Recorder<Int>()
        let subscription = Signal<Int> { subscriber in
            clock.schedule(after: .seconds(1)) { subscriber.sendNext(7) }
        }.subscribe(recorder)
        #expect(!subscription.isDisposed)
        clock.advance(by: .seconds(1))
        #expect(recorder.values == [7])
        subscription.dispose()
    }

    @Test func neverKeepsItsSubscriptionUntilDisposed() {
        let disposed = Box(false)
        let subscription = Signal<Int>.never.onDispose { disposed.value = true }.subscribe()
        #expect(!disposed.value)
        subscription.dispose()
        #expect(disposed.value)
    }

    @Test(arguments: SubjectKind.allCases)
    func releasingASubjectThatNeverEndedEndsTheChainsSubscribedToIt(kind: SubjectKind) {
        let cleanups = Box(0)
        let recorder = Recorder<Int>()
        do {
            let (signal, input) = kind.make()
            _ = signal.map { $0 * 10 }.filter { _ in true }.onDispose { cleanups.mutate { $0 += 1 } }.subscribe(recorder)
            input.sendNext(1)
        }
        // No terminal event (the subject never sent one), but the chain's cleanup ran.
        #expect(recorder.values.last == 10)
        #expect(recorder.events.filter(\.isTerminal).isEmpty)
        #expect(cleanups.value == 1)
    }

    @Test func disposingScheduledWorkReleasesItsClosureBeforeItsTime() {
        final class Payload: Sendable {}
        let schedulers: [any Scheduler] = [
            TestScheduler(), SerialQueueScheduler(label: "lifetime"), BackgroundScheduler(),
        ]
        for scheduler in schedulers {
            weak var weakPayload: Payload?
            let work: any Disposable = {
                let payload = Payload()
                weakPayload = payload
                return scheduler.schedule(after: .seconds(3600)) { _ = payload }
            }()
            #expect(weakPayload != nil)
            work.dispose()
            #expect(weakPayload == nil, "\(type(of: scheduler)) kept a disposed action's closure")
        }
    }

    @Test func disposingWorkQueuedOnTheImmediateTrampolineReleasesItsClosure() {
        final class Payload: Sendable {}
        final class WeakPayload: @unchecked Sendable { weak var payload: Payload? }
        let observed = WeakPayload()
        let releasedAtDispose = Box(false)
        ImmediateScheduler.shared.schedule {
            let work: any Disposable = {
                let payload = Payload()
                observed.payload = payload
                return ImmediateScheduler.shared.schedule { _ = payload }  // queued behind this action
            }()
            work.dispose()
            releasedAtDispose.value = observed.payload == nil
        }
        #expect(releasedAtDispose.value)
    }
}
