import CRippleThread
import Synchronization

/// Whether the code running now is isolated to `actor`: its executor is the current one.
///
/// The main actor counts as current on the main thread. Answers `false` when the runtime
/// cannot tell (callers then take their safe path: a hop). May run a custom executor's
/// `isIsolatingCurrentContext()`, which is user code: never call it under a lock.
@usableFromInline
func isCurrentlyIsolated(to actor: any Actor) -> Bool {
    let words = unsafeBitCast(actor.unownedExecutor, to: (UnsafeRawPointer?, UInt).self)
    return ripple_is_current_executor(words.0, words.1)
}

/// Starts one job that runs `body` isolated to `actor`: a detached `Task` (it inherits no
/// priority or task-locals from whoever starts it). For the main actor it is enqueued straight
/// on the main queue; for another actor it starts on the global pool and enters the actor.
@usableFromInline
func startJob(on actor: any Actor, _ body: @escaping @Sendable () -> Void) {
    if actor === MainActor.shared {
        Task.detached { @MainActor in body() }
    } else {
        Task.detached { await runIsolated(to: actor, body) }
    }
}

/// Runs `body` isolated to `actor` (the caller hops there).
@usableFromInline
func runIsolated(to actor: isolated any Actor, _ body: @Sendable () -> Void) {
    body()
}

/// Delivers one closure subscription's events on the actor it was made on.
///
/// A subscription made in an actor-isolated context (`@MainActor` code, an `actor`'s method)
/// gets its callbacks on that actor. The upstream calls `receive` one event at a time, from
/// whatever thread sends (it serializes them). An event that arrives **on the actor** while
/// nothing is queued is delivered at once, synchronously, so same-actor code behaves as
/// without an actor. Any other event is queued, and the first queued event of a batch
/// schedules one drain on the actor (one detached `Task` for the whole batch: on the main
/// actor it is enqueued straight on the main queue; for another actor it starts on the global
/// pool and enters the actor); the drain delivers the queue in order until it is empty. So
/// callbacks run on the actor, in send order, never two at once.
///
/// Invariants (under `state`'s lock):
/// - `scheduled` is true from the moment a drain is scheduled until that drain finds the
///   queue empty; while it is true every event is queued (never delivered past the queue).
/// - `callbacks` is nil once the delivery ended (see below);
///   then nothing is queued and nothing more is delivered.
/// The closures are released after unlocking (their captures' `deinit` is user code).
///
/// When the subscription ends — a terminal event, the upstream letting go of its closures
/// (`ActorDeliveryFeed`), the actor being freed, or `dispose()` — the delivery lets go of the
/// closures, the queue, its spare buffer and the upstream (disposing the upstream in the last
/// two cases), all after unlocking.
///
/// Disposing drops what is queued and releases the closures at once; a drain already
/// scheduled on the actor then finds nothing to do (a scheduled job cannot be withdrawn).
/// Disposed on the actor, nothing more is delivered; disposed from another thread while a
/// drain runs, the callback that drain is starting may still run, once (as with any
/// subscription disposed from a thread other than the delivering one).
///
/// The queue has no bound: a producer on another thread that outpaces the actor grows it
/// (`deliver(on: ActorScheduler(actor), bufferSize:whenFull:)` drops or fails instead, and
/// `.wait` there never blocks, since an actor has no thread of its own).
@usableFromInline
final class ActorDelivery<Value>: Disposable, @unchecked Sendable {  // callbacks run only on `actor`; state behind `state`'s lock; events from another thread come only through Sendable signals
    @usableFromInline
    struct State: @unchecked Sendable {  // events stay inside but for the batches handed to the drain on the actor
        @usableFromInline var callbacks: EventCallbacks<Value>?
        @usableFromInline var pending = FIFOQueue<Event<Value>>()
        @usableFromInline var scheduled = false
        /// The upstream let go of its closures (it ended, or was freed without a terminal
        /// event): once the queue is delivered, the user's closures are released.
        @usableFromInline var upstreamGone = false
        /// The upstream subscription, while it may still send: disposed with the delivery (when
        /// the user disposes, or the actor is gone), dropped once the upstream has ended.
        @usableFromInline var upstream: (any Disposable)?
        /// An earlier batch's emptied buffer (at most 1,024 events' room), reused by the next.
        @usableFromInline var spare = ContiguousArray<Event<Value>?>()

        @usableFromInline init(callbacks: EventCallbacks<Value>?) { self.callbacks = callbacks }

        /// What an ended delivery lets go of, to be released (and the upstream disposed, if it
        /// is disposing) after unlocking.
        @usableFromInline
        struct Ended {
            @usableFromInline var callbacks: EventCallbacks<Value>?
            @usableFromInline var pending: FIFOQueue<Event<Value>>
            @usableFromInline var spare: ContiguousArray<Event<Value>?>
            @usableFromInline var upstream: (any Disposable)?
            @usableFromInline init(
                callbacks: EventCallbacks<Value>?, pending: FIFOQueue<Event<Value>>,
                spare: ContiguousArray<Event<Value>?>, upstream: (any Disposable)?
            ) {
                self.callbacks = callbacks
                self.pending = pending
                self.spare = spare
                self.upstream = upstream
            }
        }

        /// Ends the delivery: nothing more is delivered or queued.
        @inlinable
        mutating func end() -> Ended {
            defer {
                callbacks = nil
                pending = FIFOQueue()
                spare = []
                upstream = nil
            }
            return Ended(callbacks: callbacks, pending: pending, spare: spare, upstream: upstream)
        }
    }

    /// Weak: the actor usually holds the subscription (and its callbacks capture the actor);
    /// a strong reference here would keep both alive after the subscription ends. Set only in
    /// `init`. Once the actor is gone there is nothing to deliver to: the delivery disposes itself.
    @usableFromInline weak var actor: (any Actor)?
    @usableFromInline let state: Lock<State>
    @usableFromInline let disposed = Atomic<Bool>(false)
    /// `state.scheduled`, readable without the lock: while it is true every event queues, so a
    /// sender skips the executor check. Written under the lock; a stale `true` only costs a hop.
    @usableFromInline let scheduledHint = Atomic<Bool>(false)
    /// How many jobs were scheduled on the actor (one per batch): tests pin the hop's cost.
    @usableFromInline let jobsScheduled = Atomic<Int>(0)
    @inlinable
    init(on actor: any Actor, callbacks: EventCallbacks<Value>) {
        self.actor = actor
        self.state = Lock(State(callbacks: callbacks))
    }

    @inlinable var isDisposed: Bool { disposed.load(ordering: .acquiring) }

    @inlinable func dispose() {
        guard !disposed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let released = state.withLock { $0.end() }
        released.upstream?.dispose()  // after unlocking; the rest is released with `released`
    }

    /// Hands over the upstream subscription once `makeSubscription` returned it.
    @inlinable func attach(_ upstream: any Disposable) {
        let disposeNow = state.withLock { state -> Bool in
            if isDisposed { return true }
            if state.callbacks == nil { return false }  // already ended: nothing to keep
            state.upstream = upstream
            return false
        }
        if disposeNow { upstream.dispose() }
    }

    /// The upstream let go of its closures: release the user's once the queue is delivered.
    @inlinable func upstreamEnded() {
        var finished: State.Ended? = nil
        state.withLock { state in
            state.upstreamGone = true
            if !state.scheduled { finished = state.end() }
        }
        _ = finished  // released after unlocking
    }

    /// Takes one event from the upstream (never two at once).
    @inlinable func receive(_ event: Event<Value>) {
        // May be user code (a custom executor's check): before locking. Not needed while a
        // drain is scheduled, since the event then queues wherever it comes from.
        let here = !scheduledHint.load(ordering: .relaxed) && actor.map(isCurrentlyIsolated) == true
        var now: EventCallbacks<Value>? = nil
        var ended: State.Ended? = nil  // released after unlocking (the upstream ended itself)
        var schedule = false
        state.withLock { state in
            guard let callbacks = state.callbacks else { return }
            if here && !state.scheduled {
                now = callbacks
                if event.isTerminal { ended = state.end() }
            } else {
                state.pending.append(event)
                if !state.scheduled {
                    state.scheduled = true
                    scheduledHint.store(true, ordering: .relaxed)
                    schedule = true
                }
            }
        }
        _ = ended
        if let now {
            deliver(event, to: now)
        } else if schedule {
            scheduleDrain()
        }
    }

    @inlinable func scheduleDrain() {
        guard let actor else { return dispose() }  // nobody left to deliver to: end the upstream too
        jobsScheduled.add(1, ordering: .relaxed)
        startJob(on: actor) { self.drain() }
    }

    /// Runs on the actor: delivers the queue in order until it is empty.
    @inlinable func drain() {
        var batch = ContiguousArray<Event<Value>?>()
        while true {
            var finished: State.Ended? = nil  // an ended upstream's leftovers, released after unlocking
            var unused = ContiguousArray<Event<Value>?>()  // a buffer not kept, freed after unlocking
            defer { _ = (finished, unused) }
            let callbacks: EventCallbacks<Value>? = state.withLock { state in
                // Keep the emptied buffer for the next batch, up to 16 KiB (a burst's is freed).
                if batch.capacity * MemoryLayout<Event<Value>?>.stride <= 16_384
                    && state.spare.capacity < batch.capacity {
                    swap(&state.spare, &batch)
                }
                unused = batch
                guard let callbacks = state.callbacks, !state.pending.isEmpty else {
                    state.scheduled = false
                    scheduledHint.store(false, ordering: .relaxed)
                    if state.upstreamGone { finished = state.end() }
                    return nil
                }
                batch = state.pending.removeAll()
                state.pending.storage = state.spare  // empty, with the capacity of an earlier batch
                state.spare = []
                return callbacks
            }
            guard let callbacks else { return }
            defer { batch.removeAll(keepingCapacity: true) }  // releases the events outside the lock
            for case let event? in batch {
                if isDisposed { break }
                if event.isTerminal {
                    var released: State.Ended? = nil
                    state.withLock { state in
                        released = state.end()
                        state.scheduled = false
                        scheduledHint.store(false, ordering: .relaxed)
                    }
                    _ = released  // the upstream ended itself: released, not disposed
                    deliver(event, to: callbacks)
                    return
                }
                deliver(event, to: callbacks)
            }
        }
    }

    @inlinable func deliver(_ event: Event<Value>, to callbacks: EventCallbacks<Value>) {
        RippleDebug.checkNoLockHeld("a subscription callback on its actor")
        switch event {
        case .next(let value): callbacks.next?(value)
        case .error(let error): callbacks.error?(error)
        case .completed: callbacks.completed?()
        }
    }
}

/// Held only by the closures an `ActorDelivery` gives its upstream. When the upstream releases
/// them — after its terminal event, or when it is freed without one (a subject nobody holds) —
/// the delivery releases the user's closures once its queue is delivered. Without it, a user
/// closure that holds the subscription (`observe(owner:)`'s does) would keep itself alive.
@usableFromInline
final class ActorDeliveryFeed<Value>: Sendable {
    @usableFromInline let delivery: ActorDelivery<Value>
    @inlinable init(_ delivery: ActorDelivery<Value>) { self.delivery = delivery }
    deinit { delivery.upstreamEnded() }
}

extension SignalProtocol {
    /// Subscribes the closures so they run on `actor` (see `ActorDelivery`), or on the sending
    /// thread when `actor` is nil (the plain `makeSubscription`).
    @inlinable
    func subscribe(
        deliveringOn actor: (any Actor)?,
        next: ((Value) -> Void)?, error: ((any Error) -> Void)?, completed: (() -> Void)?
    ) -> any Disposable {
        guard let actor else { return makeSubscription(next: next, error: error, completed: completed) }
        let delivery = ActorDelivery(on: actor, callbacks: EventCallbacks(next: next, error: error, completed: completed))
        // The closures below capture only the feed (Sendable): the user's closures stay in the
        // delivery, which the feed tells when the upstream lets the closures go.
        let feed = ActorDeliveryFeed(delivery)
        let upstream = makeSubscription(
            next: { feed.delivery.receive(.next($0)) },
            error: { feed.delivery.receive(.error($0)) },
            completed: { feed.delivery.receive(.completed) })
        delivery.attach(upstream)
        return CompoundDisposable([delivery, upstream])
    }
}
