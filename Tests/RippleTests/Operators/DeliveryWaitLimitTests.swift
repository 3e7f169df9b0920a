import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// `deliver(on:)`'s `.wait` where the wait-for graph cannot see who holds the scheduled drain up:
/// a plain block on the queue, an action of a queue targeting it, a sender on the queue it
/// targets. Waiting for room there could last forever: a wait ends at `DeliveryOverflow.waitLimit`,
/// the value enters beyond the bound, and every value arrives exactly once, in order.
@Suite(.leakChecked, .offThePool, .serialized) struct DeliveryWaitLimitTests {
    /// How long a test waits for a send that should return (a hang guard, not a measurement).
    static let hangGuard: DispatchTimeInterval = .seconds(120)

    /// Runs `send` on a thread of its own; returns its identity (for the wait-for graph) and a
    /// semaphore signalled when `send` returns.
    func startSender(_ send: @escaping @Sendable () -> Void) -> (identity: UInt, returned: DispatchSemaphore) {
        let identity = Atomic<UInt>(0), returned = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            identity.store(TurnIdentity.current, ordering: .releasing)
            send()
            returned.signal()
        }
        #expect(waitUntil(timeout: 120) { identity.load(ordering: .acquiring) != 0 })
        return (identity.load(ordering: .acquiring), returned)
    }

    /// Waits until the thread `identity` waits in the wait-for graph (for room, here).
    func waitUntilWaiting(_ identity: UInt) {
        #expect(waitUntil(timeout: 120) { WaitGraph.state.withLock { $0.waiting[identity] != nil } })
    }

    /// Waits for everything queued on `queue` so far (the drain included) to have run.
    func settle(_ queue: DispatchQueue) {
        let settled = DispatchSemaphore(value: 0)
        queue.async { settled.signal() }
        #expect(settled.wait(timeout: .now() + Self.hangGuard) == .success, "the delivery queue is stuck")
    }

    @Test func aPlainBlockOnTheDeliveryQueueThatSendsIntoTheSourceDoesNotDeadlockAWaitingSender() {
        let queue = DispatchQueue(label: "delivery")
        let source = Subject<Int>()
        let received = Box<[Int]>([])
        let subscription = source.deliver(on: SerialQueueScheduler(queue: queue), bufferSize: 1)
            .subscribeNext { value in received.mutate { $0.append(value) } }
        let timedOutBefore = RippleDebug.deliveryWaitsTimedOut
        let gate = DispatchSemaphore(value: 0), blockReturned = DispatchSemaphore(value: 0)
        queue.async {  // a plain block: Ripple does not know it occupies the queue
            gate.wait()
            source.sendNext(100)  // waits for the subject's turn, held by the sender below
            blockReturned.signal()
        }
        let sender = startSender {
            source.sendNext(1)  // enters; its drain is queued behind the plain block
            source.sendNext(2)  // the buffer is full: waits for room, holding the subject's turn
        }
        waitUntilWaiting(sender.identity)
        gate.signal()
        #expect(sender.returned.wait(timeout: .now() + Self.hangGuard) == .success, "the waiting sender never returned")
        #expect(blockReturned.wait(timeout: .now() + Self.hangGuard) == .success, "the plain block never returned")
        settle(queue)
        #expect(received.value == [1, 2, 100])
        #expect(RippleDebug.deliveryWaitsTimedOut > timedOutBefore)
        subscription.dispose()
    }

    @Test func anActionOnAQueueTargetingTheDeliveryQueueDoesNotDeadlockAWaitingSender() {
        let target = DispatchQueue(label: "delivery")
        let inner = SerialQueueScheduler(queue: DispatchQueue(label: "inner", target: target))
        let source = Subject<Int>()
        let received = Box<[Int]>([])
        let subscription = source.deliver(on: SerialQueueScheduler(queue: target), bufferSize: 1)
            .subscribeNext { value in received.mutate { $0.append(value) } }
        let gate = DispatchSemaphore(value: 0), actionReturned = DispatchSemaphore(value: 0)
        inner.schedule {  // a Ripple action, recorded as the inner queue's occupant, not the target's
            gate.wait()
            source.sendNext(100)
            actionReturned.signal()
        }
        let sender = startSender {
            source.sendNext(1)
            source.sendNext(2)
        }
        waitUntilWaiting(sender.identity)
        gate.signal()
        #expect(sender.returned.wait(timeout: .now() + Self.hangGuard) == .success, "the waiting sender never returned")
        #expect(actionReturned.wait(timeout: .now() + Self.hangGuard) == .success, "the action never returned")
        settle(target)
        #expect(received.value == [1, 2, 100])
        subscription.dispose()
    }

    @Test func aSenderOnTheQueueTheDeliveryQueueTargetsDoesNotWaitForADrainItHoldsUp() {
        let below = DispatchQueue(label: "below")
        let queue = DispatchQueue(label: "delivery", target: below)
        let source = Subject<Int>()
        let received = Box<[Int]>([])
        let subscription = source.deliver(on: SerialQueueScheduler(queue: queue), bufferSize: 1)
            .subscribeNext { value in received.mutate { $0.append(value) } }
        let returned = DispatchSemaphore(value: 0)
        below.async {  // the drain on `queue` can only run once this block ends
            for value in 1...3 { source.sendNext(value) }
            source.sendCompleted()
            returned.signal()
        }
        #expect(returned.wait(timeout: .now() + Self.hangGuard) == .success, "the sender below never returned")
        settle(queue)
        #expect(received.value == [1, 2, 3])
        subscription.dispose()
    }

    @Test func disposeWakesAWaitingSenderBeforeItsSchedulersCancellationRuns() {
        // The scheduler's cancellation is user code that waits for the queue; a plain block on
        // the queue waits for the subject's turn, which the waiting sender holds. Woken only
        // after that cancellation, the sender (its wait run out, its wake taken) never returned.
        let queue = DispatchQueue(label: "delivery")
        let source = Subject<Int>()
        let received = Box<[Int]>([])
        let subscription = source.deliver(on: QueueSyncingCancellation(queue: queue), bufferSize: 1)
            .subscribeNext { value in received.mutate { $0.append(value) } }
        let gate = DispatchSemaphore(value: 0), blockReturned = DispatchSemaphore(value: 0)
        queue.async {
            gate.wait()
            source.sendNext(100)
            blockReturned.signal()
        }
        let sender = startSender {
            source.sendNext(1)
            source.sendNext(2)
        }
        waitUntilWaiting(sender.identity)
        gate.signal()
        let disposed = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            subscription.dispose()
            disposed.signal()
        }
        #expect(sender.returned.wait(timeout: .now() + Self.hangGuard) == .success, "the waiting sender never returned")
        #expect(disposed.wait(timeout: .now() + Self.hangGuard) == .success, "dispose never returned")
        #expect(blockReturned.wait(timeout: .now() + Self.hangGuard) == .success, "the plain block never returned")
        #expect(received.value.allSatisfy { $0 == 1 || $0 == 2 })
    }

    @Test func aSenderWhoseWaitTimedOutLeavesNoStaleWakeForItsNextWait() {
        let waiter = TurnWaiter(TurnIdentity.current)
        #expect(waiter.wait(until: .now()) == .timedOut)
        waiter.withdraw()
        // The next wait gets its own wake only.
        let woken = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            waiter.handOff()
            woken.signal()
        }
        #expect(waiter.wait() == true)
        #expect(woken.wait(timeout: .now() + Self.hangGuard) == .success)
        #expect(waiter.wait(until: .now()) == .timedOut, "no second wake is left behind")
        waiter.withdraw()
    }

    @Test func aWaitThatTimedOutAfterItsWakerTookItConsumesThatWake() {
        let waiter = TurnWaiter(TurnIdentity.current)
        #expect(waiter.wait(until: .now()) == .timedOut)
        // A drain took the waiter before it could withdraw: its wake is on the way.
        Thread.detachNewThread { waiter.done() }
        #expect(waiter.finishTimedWait() == .delivered)
        #expect(waiter.wait(until: .now()) == .timedOut, "the wake was consumed")
        waiter.withdraw()
    }

    @Test func aSenderWhoseDrainRunsPromptlyGetsEveryValueThroughInOrder() {
        let scheduler = SerialQueueScheduler(label: "prompt")
        let source = Subject<Int>()
        let received = Box<[Int]>([])
        let subscription = source.deliver(on: scheduler, bufferSize: 1)
            .subscribeNext { value in received.mutate { $0.append(value) } }
        let sender = startSender {
            for value in 1...200 { source.sendNext(value) }
        }
        #expect(sender.returned.wait(timeout: .now() + Self.hangGuard) == .success)
        settle(scheduler.queue)
        #expect(received.value == Array(1...200))
        subscription.dispose()
    }
}

/// A serial-queue scheduler whose cancellation waits for its queue (`queue.sync {}`): user code
/// in a disposable that depends on what the queue runs.
final class QueueSyncingCancellation: Scheduler {
    let queue: DispatchQueue
    private let base: SerialQueueScheduler

    init(queue: DispatchQueue) {
        self.queue = queue
        base = SerialQueueScheduler(queue: queue)
    }

    func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        let scheduled = base.schedule(action)
        return ActionDisposable { [queue] in
            scheduled.dispose()
            queue.sync {}
        }
    }

    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        let scheduled = base.schedule(after: delay, action)
        return ActionDisposable { [queue] in
            scheduled.dispose()
            queue.sync {}
        }
    }

    var runsActionsOnItsOwnThreads: Bool { true }
    var isCurrent: Bool { base.isCurrent }
}
