import Dispatch
import Synchronization

/// Scheduling operators move events (and, for `subscribe(on:)`, the signal) to other threads,
/// so they need `Sendable` values: a non-`Sendable` value never leaves its isolation domain.
extension SignalProtocol where Self: Sendable, Value: Sendable {
    /// Subscribes to `self` on `scheduler`: the subscribe closure (and whatever it sends
    /// synchronously) runs there (RAC's `subscribeOn:`).
    ///
    /// Disposing before the scheduled subscription starts means `self` is never subscribed;
    /// disposing later disposes the upstream subscription — at once, even while a synchronous
    /// `self` is still sending from inside its subscribe: the upstream subscription joins this
    /// one before `self`'s producer runs, so the source's loop stops within an element.
    ///
    ///     work.subscribe(on: BackgroundScheduler()).subscribeNext { print($0) }
    public func subscribe(on scheduler: any Scheduler) -> Signal<Value> {
        Signal { subscriber in
            // The action runs once: it links the upstream subscription straight into this one,
            // before `self`'s producer runs (`subscribe(_:linking:)`), and with a scheduler that
            // runs it at once (`ImmediateScheduler`), before `schedule` returns.
            scheduler.schedule {
                self.subscribe(subscriber, linkingInto: subscriber.disposable)
            }
        }
    }

}

extension SignalProtocol where Value: Sendable {
    /// Delivers every event on `scheduler`, in order (RAC's `deliverOn:`), through a buffer of
    /// at most `bufferSize` values.
    ///
    /// Events of one subscription are queued and drained by one scheduled action at a time,
    /// so they keep their order and never overlap even on `BackgroundScheduler`. When the
    /// upstream sends faster than `scheduler` delivers and `bufferSize` values wait, `overflow`
    /// decides (see `DeliveryOverflow`): by default the sender waits for room, so memory stays
    /// bounded and a fast producer is slowed to the scheduler's pace. A terminal event always
    /// enters the buffer. Disposing drops what is still queued, cancels the scheduled drain and
    /// wakes waiting senders.
    ///
    ///     source:   -a-b-|
    ///     deliver:  -a-b-|   (each on `scheduler`)
    ///
    ///     ticks.deliver(on: ui, bufferSize: 1, whenFull: .dropOldest)   // only the latest waits
    ///
    /// - Parameters:
    ///   - scheduler: Where the events are delivered.
    ///   - bufferSize: How many values may wait for `scheduler` (at least 1; 1,024 by default).
    ///   - overflow: What a value that finds the buffer full does (`.wait` by default).
    /// - Returns: A signal of the same events, delivered on `scheduler`.
    /// - Precondition: `bufferSize` is at least 1.
    @inlinable
    public func deliver(
        on scheduler: any Scheduler, bufferSize: Int = 1024, whenFull overflow: DeliveryOverflow = .wait
    ) -> Signal<Value> {
        precondition(bufferSize >= 1, "Ripple: deliver(on:bufferSize:) needs a bufferSize of at least 1, got \(bufferSize)")
        return Signal { downstream in
            let relay = DeliveryRelay(to: downstream, on: scheduler, bufferSize: bufferSize, overflow: overflow)
            // The relay, then the upstream subscription, join this one before the upstream's
            // producer runs (`subscribe(linking:)`): ending it stops a synchronous source.
            downstream.disposable.add(relay)
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { relay.enqueue(.next($0)) },
                error: { relay.enqueue(.error($0)) },
                completed: { relay.enqueue(.completed) })
            return nil
        }
    }
}

/// What `deliver(on:bufferSize:whenFull:)` does with a value that finds its buffer full.
public enum DeliveryOverflow: Sendable, Equatable {
    /// The sender blocks until the scheduler has taken values out (back-pressure; the default).
    ///
    /// Where waiting could never end, the value enters the buffer beyond its bound instead: when
    /// the sender holds the scheduler up (`Scheduler.isCurrent`: inside one of its actions, or
    /// for a `SerialQueueScheduler` in any block on its queue, another scheduler's included),
    /// when the scheduler does not run actions on its own threads (`ImmediateScheduler`,
    /// `TestScheduler`, see `Scheduler.runsActionsOnItsOwnThreads`), and when the delivery is
    /// itself waiting for the sender: a running drain whose callback waits for the sender, or a
    /// scheduled drain queued behind a thread that waits for the sender (a cycle in the
    /// wait-for graph, see <doc:DeliveryTurn>).
    ///
    /// Code Ripple cannot see can still hold a scheduled drain up: a plain block on the
    /// scheduler's queue (or on a queue targeting it, or on the queue it targets) that waits,
    /// directly or through a delivery turn, for the waiting sender; a semaphore; an event-loop
    /// task. So no wait lasts longer than ``waitLimit``: a sender still waiting then lets its
    /// value into the buffer beyond the bound and returns (counted in
    /// ``RippleDebug/deliveryWaitsTimedOut``). Every value is still delivered exactly once, in
    /// order; the buffer outgrows its bound by at most one value per sender per `waitLimit`.
    case wait
    /// The oldest waiting value is dropped to make room.
    case dropOldest
    /// The new value is dropped.
    case dropNewest
    /// The subscription fails with `DeliveryOverflowError`; waiting values are dropped.
    case fail
}

extension DeliveryOverflow {
    /// The longest a `.wait` sender waits for room in one send: one second.
    ///
    /// Back-pressure needs a drain that can run; the wait-for graph proves most waits end (see
    /// ``wait``), and this bound ends the rest — a drain held up by code Ripple cannot see. A
    /// scheduler that is merely slow lets a waiting sender in beyond the bound once a second.
    ///
    ///     print(DeliveryOverflow.waitLimit)   // 1.0 seconds
    public static let waitLimit: Duration = .seconds(1)
}

/// The error a `deliver(on:bufferSize:whenFull: .fail)` subscription ends with when its buffer overflows.
public struct DeliveryOverflowError: Error, Equatable, CustomStringConvertible {
    /// The buffer size that was exceeded.
    public let bufferSize: Int

    /// An overflow of a buffer of `bufferSize` values.
    public init(bufferSize: Int) { self.bufferSize = bufferSize }

    /// A readable account of the overflow, naming the buffer size.
    ///
    ///     print(DeliveryOverflowError(bufferSize: 8))   // deliver(on:): more than 8 values waited for the scheduler
    public var description: String {
        "deliver(on:): more than \(bufferSize) values waited for the scheduler"
    }
}

/// Queues one subscription's events (at most `bufferSize` values) and drains them on a
/// scheduler, a batch at a time.
///
/// One drain is scheduled when the queue goes from empty to non-empty; it takes everything
/// queued in one lock acquisition, wakes the senders waiting for room, delivers the batch in
/// order, and repeats until the queue is dry.
///
/// In the wait-for graph the relay's turn is held by the draining thread while a drain runs,
/// and, while a drain is scheduled but has not started, by the thread occupying the
/// scheduler's serial queue (`QueueOccupancy`), which that drain must wait for. So a sender
/// waiting for room and a drain whose callback sends back upstream, or two relays feeding each
/// other through each other's schedulers, never wait for each other.
///
/// Invariants (under `state`): `state.drain` (a `RelayDrain`) says whether a drain exists, so
/// at most one does; every change to it is made under the lock and published to `drainer`
/// before unlocking, so the wait-for graph reads the drain's holder without the lock.
/// No user code runs under the lock: the scheduler's getters, its disposables and dropped
/// events are all used or released after unlocking.
@usableFromInline
final class DeliveryRelay<Value>: Disposable, TurnOwner, @unchecked Sendable {  // state behind its lock and turn word; created only by deliver(on:), whose values are Sendable
    // @unchecked: `state` guards the mutable state; the rest is immutable or atomic.
    /// Guarded by `state`.
    @usableFromInline
    struct State: @unchecked Sendable {  // events stay inside but for the batches handed to the drain
        @usableFromInline var queue = FIFOQueue<Event<Value>>()
        /// The values in `queue` (a terminal event does not count).
        @usableFromInline var values = 0
        /// The scheduled drain, until it runs out of work; disposed by `dispose()`.
        @usableFromInline var scheduled: (any Disposable)?
        /// Whether a drain exists, and where it runs.
        @usableFromInline var drain = RelayDrain()
        @usableFromInline var isDisposed = false
        /// Set once a terminal event (or the overflow error) is queued: later events are dropped.
        @usableFromInline var isTerminated = false
        /// Senders blocked for room (`.wait`).
        @usableFromInline var waiters: [TurnWaiter] = []
        @inlinable init() {}
    }

    @usableFromInline let downstream: PassthroughSubscriber<Value>
    @usableFromInline let scheduler: any Scheduler
    @usableFromInline let bufferSize: Int
    @usableFromInline let overflow: DeliveryOverflow
    /// `scheduler.runsActionsOnItsOwnThreads`, read once, outside any lock.
    @usableFromInline let schedulerRunsOnItsOwnThreads: Bool
    /// The scheduler's queue occupancy, if it is a `SerialQueueScheduler`.
    @usableFromInline let occupancy: QueueOccupancy?
    @usableFromInline let state = Lock(State())
    /// `state.drain.word`, published under the lock for the wait-for graph (`turnWord`).
    @usableFromInline let drainer = Atomic<UInt>(0)

    /// Publishes the drain's word for the wait-for graph (under the lock, after each transition).
    @inlinable
    func publish(_ drain: RelayDrain) { drainer.store(drain.word, ordering: .releasing) }

    @inlinable
    init(to downstream: PassthroughSubscriber<Value>, on scheduler: any Scheduler, bufferSize: Int, overflow: DeliveryOverflow) {
        self.downstream = downstream
        self.scheduler = scheduler
        self.bufferSize = bufferSize
        self.overflow = overflow
        schedulerRunsOnItsOwnThreads = scheduler.runsActionsOnItsOwnThreads
        occupancy = (scheduler as? SerialQueueScheduler)?.occupancy
    }

    /// Who the relay's drain waits for: the draining thread, or for a scheduled drain the
    /// thread occupying the scheduler's serial queue (0: nobody known, the drain can start).
    @usableFromInline var turnWord: UInt {
        let word = drainer.load(ordering: .acquiring)
        guard word == RelayDrain.scheduledWord else { return word }
        return occupancy?.occupant.load(ordering: .acquiring) ?? 0
    }

    @usableFromInline var isDisposed: Bool { state.withLock { $0.isDisposed } }

    @usableFromInline
    func dispose() {
        let (dropped, scheduled, waiters) = state.withLock { state in
            state.isDisposed = true
            state.values = 0
            if state.drain.phase == .scheduled {  // cancelled below; if it runs anyway, `start` stops it
                state.drain.finish()
                publish(state.drain)
            }
            defer { state.scheduled = nil; state.waiters = [] }
            return (state.queue.removeAll(), state.scheduled, state.waiters)
        }
        // Wake the waiting senders first: releasing the dropped values and cancelling the drain
        // run user code (a value's deinit, the scheduler's disposable), which may wait for a turn
        // one of those senders holds — and a sender whose wait ran out waits for this wake.
        withExtendedLifetime(dropped) {
            for waiter in waiters { waiter.handOff() }
        }  // `dropped` is released here, outside the lock, after the wakes
        scheduled?.dispose()
    }

    /// What `enqueue` does after unlocking.
    @usableFromInline
    enum Step {
        case done
        /// Schedule the drain of this generation (`RelayDrain.request()`).
        case schedule(Int)
        case wait(TurnWaiter)
        /// The buffer is full under `.wait`: ask the scheduler whether the sender may block
        /// (outside the lock), then try again.
        case askScheduler
    }

    @inlinable
    func enqueue(_ event: Event<Value>) {
        var mayWait: Bool?
        /// When this send stops waiting for room (set at its first wait).
        var deadline: DispatchTime?
        while true {
            var dropped: Event<Value>?
            var discarded: ContiguousArray<Event<Value>?> = []
            let step: Step = state.withLock { state in
                if state.isDisposed || state.isTerminated {
                    dropped = event
                    return .done
                }
                if event.isTerminal {
                    state.isTerminated = true
                } else if state.values >= bufferSize {
                    switch overflow {
                    case .dropNewest:
                        dropped = event
                        return .done
                    case .dropOldest:
                        dropped = state.queue.popFirst()
                        state.values -= 1
                    case .fail:
                        dropped = event
                        discarded = state.queue.removeAll()
                        state.values = 0
                        state.isTerminated = true
                        state.queue.append(.error(DeliveryOverflowError(bufferSize: bufferSize)))
                        return scheduleIfIdle(&state)
                    case .wait:
                        guard let mayWait else { return .askScheduler }
                        if mayWait {
                            let waiter = TurnWaiter.ofCurrentThread
                            if WaitGraph.startWaiting(waiter, for: self) {  // reads `turnWord` under the graph's lock
                                state.waiters.append(waiter)
                                return .wait(waiter)
                            }
                        }
                    }
                }
                if !event.isTerminal { state.values += 1 }
                state.queue.append(event)
                return scheduleIfIdle(&state)
            }
            _ = (dropped, discarded)  // released here, outside the lock
            switch step {
            case .done:
                return
            case .schedule(let generation):
                let scheduled = scheduler.schedule { [self] in drain() }
                let disposeNow = state.withLock { state in
                    if state.isDisposed { return true }
                    if state.drain.keeps(generation) { state.scheduled = scheduled }
                    return false
                }
                if disposeNow { scheduled.dispose() }
                return
            case .wait(let waiter):
                // Woken when the drain takes values out, or on dispose; then try again, unless
                // the wait ran out: then the value enters beyond the bound.
                if !waitForRoom(waiter, deadline: &deadline) { mayWait = false }
            case .askScheduler:
                mayWait = senderMayWait()
            }
        }
    }

    /// Waits for room until this send's deadline (set at its first wait, `waitLimit` on);
    /// returns false when the deadline passed. A wait the graph cannot prove will end (a plain
    /// block or another queue holding the drain up) ends there.
    ///
    /// At the deadline the sender takes itself out of the waiters under the lock; if a drain or
    /// `dispose()` already took it, their wake comes right after they unlock, before any user
    /// code, and is consumed here. Either way the deadline has passed: no second wait.
    @usableFromInline
    func waitForRoom(_ waiter: TurnWaiter, deadline: inout DispatchTime?) -> Bool {
        let limit = deadline ?? .now() + .nanoseconds(DeliveryOverflow.waitLimit.clampedNanoseconds)
        deadline = limit
        guard case .timedOut = waiter.wait(until: limit) else { return true }
        let withdrawn = state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0 === waiter }) else { return false }
            state.waiters.remove(at: index)
            return true
        }
        if withdrawn {
            waiter.withdraw()
            timedOutWaits.add(1, ordering: .relaxed)
        } else {
            _ = waiter.finishTimedWait()
        }
        return false
    }

    /// Whether a sender may block for room: the scheduler runs actions on its own threads and
    /// the sender is not holding it up (`Scheduler.isCurrent`). Called outside the lock.
    @inlinable
    func senderMayWait() -> Bool {
        schedulerRunsOnItsOwnThreads && !scheduler.isCurrent
    }

    /// Asks for a drain unless one exists (under the lock).
    @inlinable
    func scheduleIfIdle(_ state: inout State) -> Step {
        guard let generation = state.drain.request() else { return .done }
        publish(state.drain)
        return .schedule(generation)
    }

    /// The largest emptied batch, in slots, a drain keeps for the queue's next appends
    /// (`FIFOQueue.removeAll(into:reusingUpTo:)`, `reuse`): one value at a time then allocates
    /// no buffer, and an idle relay keeps at most 1 KiB of empty slots (64 for `Int` values;
    /// one slot when a slot alone is larger).
    @inlinable static var reusedBatchCapacity: Int { max(1, 1_024 / MemoryLayout<Event<Value>?>.stride) }

    @inlinable
    func drain() {
        let me = TurnIdentity.current
        var starting = true
        var batch: ContiguousArray<Event<Value>?> = []  // empty between batches, its capacity kept
        while true {
            var finished: (any Disposable)?
            let waiters: [TurnWaiter]? = state.withLock { state in
                if starting {
                    starting = false
                    guard state.drain.start(by: me) else { return nil }  // disposed: this drain is not wanted
                    publish(state.drain)
                }
                if !state.isDisposed, !state.queue.isEmpty {
                    state.values = 0
                    defer { state.waiters = [] }
                    state.queue.removeAll(into: &batch, reusingUpTo: Self.reusedBatchCapacity)
                    return state.waiters
                }
                state.drain.finish()
                publish(state.drain)
                finished = state.scheduled
                state.scheduled = nil
                if !state.isDisposed, batch.capacity <= Self.reusedBatchCapacity { state.queue.reuse(&batch) }
                return nil
            }
            guard let waiters else {
                _ = (finished, batch)  // released here, outside the lock (batch: an empty array)
                return
            }
            for waiter in waiters { waiter.handOff() }  // there is room again
            for case let event? in batch {
                if downstream.isDisposed { break }
                downstream.send(event)
            }
            // The events are released here, outside the lock; so is a buffer too large to keep.
            batch.removeAll(keepingCapacity: batch.capacity <= Self.reusedBatchCapacity)
        }
    }
}
