import Synchronization

/// A subscriber built from closures (RAC's `RACSubscriber`).
///
/// It serializes: events sent from several threads at once are delivered one at a time,
/// in the order they were accepted, and callbacks never overlap. An event sent from
/// inside one of its own callbacks is queued and delivered after that callback returns.
/// After a terminal event, or after `dispose()`, nothing more is delivered and the
/// closures are released.
///
///     let subscriber = Subscriber<Int>(next: { print($0) }, completed: { print("done") })
///     Signal.from([1, 2]).subscribe(subscriber)   // 1, 2, done
///
/// A `Subscriber` is also a `Disposable`: disposing the subscription disposes it.
///
/// The uncontended path takes no lock: a thread takes the *delivery turn* with one
/// compare-and-swap, calls the closure, and gives the turn back with another. Only a thread
/// that finds the turn taken (contention, or a re-entrant send) queues its event under the
/// lock for the turn holder to deliver, in order.
public final class Subscriber<Value>: SubscriberProtocol, Disposable, @unchecked Sendable {
    /// Events waiting for the turn holder. Guarded by `queue`'s lock.
    @usableFromInline
    struct Queue: @unchecked Sendable {
        @usableFromInline var events = FIFOQueue<Event<Value>>()
        @inlinable init() {}
    }

    /// Who delivers now; the holder looks at the queue (and at `disposed`) when asked.
    @usableFromInline let turn = DeliveryTurn()
    /// Set when a terminal event is accepted or the subscriber is disposed; then nothing
    /// more is accepted.
    @usableFromInline let terminated = Atomic<Bool>(false)
    /// Set by `dispose()`: the turn holder then releases the closures. (A terminal event
    /// releases them itself, once delivered.)
    @usableFromInline let disposed = Atomic<Bool>(false)
    @usableFromInline let queue = Lock(Queue())
    /// The closures (+1), read and released only by the turn holder; nil once released.
    @usableFromInline @exclusivity(unchecked) var callbacks: Unmanaged<EventCallbacks<Value>>?
    /// The `RippleDebug.Scope` this subscription counts in, if any.
    @usableFromInline let debugScope: RippleDebug.Scope?

    /// How many operators' relays lie between this subscriber and the nearest subscriber that
    /// is not a relay (0 for that one): a chain of `map`s delivers through one relay per level.
    @usableFromInline let relayDepth: UInt32
    /// Whether delivering checks the stack (`StackGuard`). Every non-relay subscriber does;
    /// relays only every `StackGuard.relayStride` levels, so a cold pipeline of a few
    /// operators pays for one check per event, not one per operator.
    @inlinable
    var checksStack: Bool { relayDepth % StackGuard.relayStride == 0 }

    /// Creates a subscriber; every closure is optional.
    @inlinable
    public convenience init(
        next: ((Value) -> Void)? = nil,
        error: ((any Error) -> Void)? = nil,
        completed: (() -> Void)? = nil
    ) {
        self.init(relayDepth: 0, next: next, error: error, completed: completed)
    }

    /// Creates a subscriber `relayDepth` relays upstream of the nearest non-relay subscriber.
    @inlinable
    init(
        relayDepth: UInt32,
        next: ((Value) -> Void)?,
        error: ((any Error) -> Void)?,
        completed: (() -> Void)?
    ) {
        callbacks = Unmanaged.passRetained(EventCallbacks(next: next, error: error, completed: completed))
        self.relayDepth = relayDepth
        debugScope = RippleDebug.subscriptionCreated()
    }

    deinit {
        // The closures may hold the rest of a deep chain: release them where there is stack.
        if let callbacks { StackGuard.run { callbacks.release() } }
        RippleDebug.subscriptionDestroyed(in: debugScope)
    }

    /// Whether the subscriber takes no more events: it was disposed or received a terminal event.
    @inlinable
    public var isDisposed: Bool {
        terminated.load(ordering: .acquiring)
    }

    /// Delivers a value, unless the subscriber is terminated or disposed.
    @inlinable
    public func sendNext(_ value: Value) {
        if checksStack, !StackGuard.hasRoom() { return StackGuard.onFreshStack { sendNext(value) } }
        if terminated.load(ordering: .acquiring) { return }
        if takeTurn() {
            if let callbacks { callbacks._withUnsafeGuaranteedRef { $0.next?(value) } }
            finishTurn()
        } else {
            enqueue(.next(value))
        }
    }

    /// Delivers the error that ends the stream, then releases the closures.
    @inlinable
    public func sendError(_ error: any Error) {
        if checksStack, !StackGuard.hasRoom() { return StackGuard.onFreshStack { sendError(error) } }
        if terminated.exchange(true, ordering: .acquiringAndReleasing) { return }
        if takeTurn() {
            deliver(.error(error))
            finishTurn()
        } else {
            enqueue(.error(error))
        }
    }

    /// Delivers completion, then releases the closures.
    @inlinable
    public func sendCompleted() {
        if checksStack, !StackGuard.hasRoom() { return StackGuard.onFreshStack { sendCompleted() } }
        if terminated.exchange(true, ordering: .acquiringAndReleasing) { return }
        if takeTurn() {
            deliver(.completed)
            finishTurn()
        } else {
            enqueue(.completed)
        }
    }

    /// Stops delivery at once, drops queued events and releases the closures.
    ///
    /// Idempotent and thread-safe; called from inside a callback, nothing more is
    /// delivered after that callback returns.
    public func dispose() {
        if disposed.exchange(true, ordering: .acquiringAndReleasing) { return }
        terminated.store(true, ordering: .releasing)
        let dropped = queue.withLock { $0.events.removeAll() }  // queued values are not delivered
        _ = dropped
        if takeTurn() {
            finishTurn()  // sees `disposed` and releases everything
        } else {
            requestLook()
        }
    }

    // MARK: The delivery turn

    @inlinable
    func takeTurn() -> Bool { turn.take() }

    /// Delivers `event` while holding the turn; a terminal event releases the closures after.
    @inlinable
    func deliver(_ event: Event<Value>) {
        guard let callbacks else { return }
        callbacks._withUnsafeGuaranteedRef { callbacks in
            switch event {
            case .next(let value): callbacks.next?(value)
            case .error(let error): callbacks.error?(error)
            case .completed: callbacks.completed?()
            }
        }
        if event.isTerminal { releaseCallbacks() }
    }

    /// Gives the turn up, unless there is queued work or a disposal to handle first.
    @inlinable
    func finishTurn() {
        if !disposed.load(ordering: .acquiring), turn.releaseIfUnasked() { return }
        drain()
    }

    /// The slow path of the turn holder: delivers queued events in order, releases the
    /// closures once terminated with nothing left to deliver, and gives the turn up.
    @usableFromInline
    func drain() {
        while true {
            let event: Event<Value>? = queue.withLock { queue in
                turn.keep(mustLook: false)
                if let event = queue.events.popFirst() { return event }
                return nil
            }
            if let event {
                deliver(event)
                continue
            }
            // Nothing queued. Once disposed nothing more may be delivered: release.
            if disposed.load(ordering: .acquiring) { releaseCallbacks() }
            let gaveUp = queue.withLock { queue in
                if !queue.events.isEmpty { return false }
                turn.release()
                return true
            }
            if gaveUp { return }
        }
    }

    /// Queues `event` for the turn holder, or delivers it if the turn came free meanwhile.
    @usableFromInline
    func enqueue(_ event: Event<Value>) {
        let tookTurn = queue.withLock { queue in
            queue.events.append(event)
            return !turn.requestLook()
        }
        if tookTurn { drain() }
    }

    /// Asks the turn holder to look; if there is none, takes the turn and drains.
    @usableFromInline
    func requestLook() {
        let tookTurn = queue.withLock { _ in !turn.requestLook() }
        if tookTurn { drain() }
    }

    /// Releases the closures and drops queued events (turn holder only), outside the lock.
    @usableFromInline
    func releaseCallbacks() {
        let dropped = queue.withLock { $0.events.removeAll() }
        _ = dropped
        callbacks?.release()
        callbacks = nil
    }
}
