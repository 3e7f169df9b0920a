import Synchronization

/// A subscriber built from closures (RAC's `RACSubscriber`).
///
/// It serializes: events sent from several threads at once are delivered one at a time,
/// in the order they were accepted, and callbacks never overlap. A send returns once its
/// event was delivered (ReactiveCocoa's synchronous `sendNext:`): a thread that finds another
/// one delivering waits its turn — the delivering thread delivers up to 16 waiting threads'
/// events for them, then hands the turn on — so a producer faster than the callbacks is slowed
/// to their pace instead of queueing without bound. An event sent from inside one of its own
/// callbacks is queued and delivered after that callback returns (as is one whose wait would
/// close a cycle of threads waiting for each other); see the
/// <doc:DeliveryTurn>. After a terminal event, or after `dispose()`, nothing more is
/// accepted and the closures are released; a terminal event accepted before `dispose()` is
/// still delivered, after everything accepted before it.
///
///     let subscriber = Subscriber<Int>(next: { print($0) }, completed: { print("done") })
///     Signal.from([1, 2]).subscribe(subscriber)   // 1, 2, done
///
/// A `Subscriber` is also a `Disposable`: disposing the subscription disposes it.
///
/// The uncontended path takes no lock: a thread takes the *delivery turn* with one
/// compare-and-swap, calls the closure, and gives the turn back with another. Only a thread
/// that finds the turn taken goes through the lock (`TurnMachine`).
public final class Subscriber<Value>: SubscriberProtocol, Disposable, TurnOwner, @unchecked Sendable {  // a Disposable, so always Sendable: state behind its lock and turn; closures run one at a time (the isolation hole is in the README)
    // @unchecked: `callbacks` is read and written only by the turn holder (ordered by the turn's
    // acquire/release); everything else is atomic, immutable or guarded by `state`.

    /// The turn's queue. Guarded by `state`'s lock.
    @usableFromInline
    struct State: @unchecked Sendable {  // holds values, which never leave the lock but as `Event`s handed out
        @usableFromInline var machine = TurnMachine<Event<Value>>()
        @inlinable init() {}
    }

    /// `status` bits: a terminal event was accepted; `dispose()` was called. `disposedBit`
    /// alone means disposed before any terminal event (then queued values are dropped); both
    /// mean a terminal event was accepted first (then everything accepted is delivered).
    @usableFromInline static var terminalAccepted: UInt8 { 1 }
    @usableFromInline static var disposedBit: UInt8 { 2 }

    /// Who delivers now (see `DeliveryTurn`).
    @usableFromInline let turn = DeliveryTurn()
    /// `terminalAccepted` and `disposedBit`; nonzero means nothing more is accepted.
    @usableFromInline let status = Atomic<UInt8>(0)
    @usableFromInline let state = Lock(State())
    /// The closures (+1), read and released only by the turn holder; nil once released.
    @usableFromInline @exclusivity(unchecked) var callbacks: Unmanaged<EventCallbacks<Value>>?
    /// The `RippleDebug.Scope` this subscription counts in, if any.
    @usableFromInline let debugScope: RippleDebug.Scope?

    /// How many operator levels lie between this subscriber and the nearest subscriber that is
    /// not a relay (0 for that one), this one's included: an operator's relay is one level, the
    /// relay of a run of fused operators (`StageRun`) as many as the run has stages — a chain of
    /// `map`s delivers through one relay per 8 levels.
    @usableFromInline let relayDepth: UInt32
    /// Set when the only sender is a signal that already delivers one event at a time (cold-path
    /// fusion, see <doc:DeliveryTurn>): then delivery takes no turn, and `dispose()` leaves the
    /// closures to the terminal event or `deinit`.
    ///
    /// Written once, by `Signal.subscribe(exclusively:)`, before the subscriber is subscribed —
    /// so before any event can reach it (what publishes the subscription to a sending thread
    /// publishes this too) — and only for a subscriber that library code made and hands to that
    /// signal alone (an operator's relay, the subscriber of `subscribe(next:error:completed:)`):
    /// nothing else can send to it. Its sender is the signal's passthrough, which only the
    /// upstream relay's callbacks call, and those never overlap (that relay holds a turn, or is
    /// itself fused behind one that does, or its source is `Signal.from`'s loop); a send from a
    /// callback back into the chain reaches the first stage that keeps a turn (or a subject),
    /// which queues it. So callbacks still never overlap, and none is re-entered.
    ///
    /// No turn also means no lock-free way for another thread to know that no delivery runs: a
    /// `dispose()` only stops delivery (the status bit every send checks) and does not release
    /// the closures, which may be running. They go with the subscriber, which the chain lets
    /// go of as soon as the subscription ends: at once when no delivery runs, else when the
    /// delivering thread returns — as a turn holder's tidy does.
    @usableFromInline @exclusivity(unchecked) var upstreamSerializes = false

    #if DEBUG
    /// Debug builds: fused deliveries running now. The rule that makes fusion sound (one
    /// sender, whose calls never overlap, and no re-entry) is a property of the whole program,
    /// so debug builds check it where it matters: every fused delivery counts itself in here,
    /// and a second one while the first runs — from another thread, or from inside its own
    /// callback — stops the program with a message naming the rule.
    @usableFromInline let fusedDeliveries = Atomic<Int>(0)
    #endif

    /// Marks the start of a fused delivery (debug builds: checks that none overlaps it).
    @inlinable @inline(__always)
    func enterFusedDelivery() {
        #if DEBUG
        let running = fusedDeliveries.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue
        precondition(running == 1, "Ripple: two deliveries overlapped in a fused subscriber: only its one upstream passthrough may send to it, one event at a time, never from inside its callbacks (see Subscriber.upstreamSerializes)")
        #endif
    }

    /// Marks the end of a fused delivery.
    @inlinable @inline(__always)
    func exitFusedDelivery() {
        #if DEBUG
        fusedDeliveries.wrappingSubtract(1, ordering: .acquiringAndReleasing)
        #endif
    }

    /// Whether delivering checks the stack (`StackGuard`). Every subscriber that keeps its turn
    /// does; fused relays only every `StackGuard.relayStride` levels, so a cold pipeline of a
    /// few operators pays for at most one check per event, not one per operator.
    ///
    /// A fused subscriber at depth 0 (the one `subscribe(next:…)` made for a pipeline) does not
    /// check either: every event reaches it through fewer than `relayStride` fused stages from
    /// the last check — the first stage of its fused run, which is either fed by `from`'s loop
    /// (checked once at its `subscribe`) or is a subscriber that keeps its turn, and such a
    /// subscriber checks on every event, at any depth. (Without that, a relay at depth 1 on a
    /// user signal would not check, nor would the fused subscriber below it: a custom operator
    /// `Signal { s in upstream.map(f).subscribe(next: { s.sendNext($0) }) }` applied 100,000
    /// times, or `map(f).take(until:)` 100,000 times, would deliver with no check at all and
    /// overflow the stack.)
    ///
    /// A relay that heads a run of fused operators (`StageRun`) stands for the run's stages: it
    /// checks when one of its levels, `relayDepth - levels + 1 ... relayDepth`, is a multiple of
    /// `relayStride`.
    @inlinable
    var checksStack: Bool {
        upstreamSerializes ? checksStackWhenFused : true
    }

    /// `checksStack` once fused: whether one of the relay levels this subscriber stands for is a
    /// nonzero multiple of `StackGuard.relayStride`. Computed once, at `init`.
    @usableFromInline let checksStackWhenFused: Bool

    /// Creates a subscriber; every closure is optional.
    @inlinable
    public convenience init(
        next: ((Value) -> Void)? = nil,
        error: ((any Error) -> Void)? = nil,
        completed: (() -> Void)? = nil
    ) {
        self.init(relayDepth: 0, levels: 0, next: next, error: error, completed: completed)
    }

    /// Creates a subscriber `relayDepth` operator levels upstream of the nearest non-relay
    /// subscriber, standing for the last `levels` of them (1 for an operator's relay, a run's
    /// length for a `StageRun`'s, 0 for a subscriber that is no relay).
    @inlinable
    init(
        relayDepth: UInt32,
        levels: UInt32,
        next: ((Value) -> Void)?,
        error: ((any Error) -> Void)?,
        completed: (() -> Void)?
    ) {
        callbacks = Unmanaged.passRetained(EventCallbacks(next: next, error: error, completed: completed))
        self.relayDepth = relayDepth
        let stride = StackGuard.relayStride
        checksStackWhenFused = levels != 0 && relayDepth / stride != (relayDepth &- levels) / stride
        debugScope = RippleDebug.subscriptionCreated()
    }

    /// A subscriber that forwards to `receiver`, serializing what reaches it (used for a
    /// `SubscriberProtocol` conformer that does not serialize by itself).
    @inlinable
    convenience init(serializing receiver: any SubscriberProtocol<Value>) {
        self.init(
            relayDepth: 0, levels: 0,
            next: { receiver.sendNext($0) },
            error: { receiver.sendError($0) },
            completed: { receiver.sendCompleted() })
    }

    deinit {
        // The closures may hold the rest of a deep chain: release them where there is stack.
        if let callbacks { StackGuard.run { callbacks.release() } }
        RippleDebug.subscriptionDestroyed(in: debugScope)
    }

    /// Whether the subscriber takes no more events: it was disposed or received a terminal event.
    @inlinable
    public var isDisposed: Bool {
        status.load(ordering: .acquiring) != 0
    }

    @usableFromInline var turnWord: UInt { turn.word.load(ordering: .acquiring) }

    /// Delivers a value, unless the subscriber is terminated or disposed; returns once delivered
    /// (or queued, from inside a callback).
    @inlinable
    public func sendNext(_ value: Value) {
        if checksStack, !StackGuard.hasRoom() { return sendNextOnFreshStack(value) }
        if status.load(ordering: .acquiring) != 0 { return }
        if upstreamSerializes {  // fused: the sender already delivers one event at a time
            RippleDebug.checkNoLockHeld("a subscriber's next callback")
            enterFusedDelivery()
            defer { exitFusedDelivery() }
            if let callbacks { callbacks._withUnsafeGuaranteedRef { $0.next?(value) } }
            return
        }
        let me = TurnIdentity.current
        if turn.takeFree(me) {
            RippleDebug.checkNoLockHeld("a subscriber's next callback")
            if let callbacks { callbacks._withUnsafeGuaranteedRef { $0.next?(value) } }
            finishTurn(me)
        } else {
            arrive(.next(value), me)
        }
    }

    /// `sendNext` as a passthrough calls it: a fused stage that needs no stack check here (all
    /// but every `StackGuard.relayStride`-th) is one status check and the closure's call,
    /// inlined into the stage before it; anything else is the full `sendNext`.
    @inlinable @inline(__always)
    func forwardNext(_ value: Value) {
        if upstreamSerializes && !checksStack {
            if status.load(ordering: .acquiring) != 0 { return }
            RippleDebug.checkNoLockHeld("a subscriber's next callback")
            enterFusedDelivery()
            defer { exitFusedDelivery() }
            if let callbacks { callbacks._withUnsafeGuaranteedRef { $0.next?(value) } }
            return
        }
        sendNext(value)
    }

    /// `sendNext` deep in a chain, continued on a fresh stack. Out of line, so the common path
    /// keeps a short prologue (the closure and continuation it builds need registers and frame).
    @usableFromInline @inline(never)
    func sendNextOnFreshStack(_ value: Value) {
        StackGuard.onFreshStack { sendNext(value) }
    }

    /// Delivers each element of `sequence` in order while nothing stops the subscriber; returns
    /// false when it was disposed or terminated first. Only for a fused subscriber
    /// (`upstreamSerializes`) whose one sender is the caller's loop (`Signal.from`).
    ///
    /// The loop holds the closures without looking them up per element: a fused subscriber's
    /// closures are released only by its terminal event, which only this sender sends (after the
    /// loop), or by `deinit`, which cannot run while the caller holds it. The stack is checked
    /// once: every element's delivery starts at the same depth.
    @inlinable
    func receiveEach<S: Sequence>(_ sequence: S) -> Bool where S.Element == Value {
        if checksStack, !StackGuard.hasRoom() { return StackGuard.onFreshStack { receiveEach(sequence) } }
        guard let callbacks else { return false }  // released: a terminal event was delivered
        enterFusedDelivery()
        defer { exitFusedDelivery() }
        return callbacks._withUnsafeGuaranteedRef { callbacks in
            for element in sequence {
                if status.load(ordering: .acquiring) != 0 { return false }
                RippleDebug.checkNoLockHeld("a subscriber's next callback")
                callbacks.next?(element)
            }
            return true
        }
    }

    /// Delivers the error that ends the stream, then releases the closures.
    @inlinable
    public func sendError(_ error: any Error) {
        if checksStack, !StackGuard.hasRoom() { return StackGuard.onFreshStack { sendError(error) } }
        if !acceptTerminal() { return }
        sendTerminal(.error(error))
    }

    /// Delivers completion, then releases the closures.
    @inlinable
    public func sendCompleted() {
        if checksStack, !StackGuard.hasRoom() { return StackGuard.onFreshStack { sendCompleted() } }
        if !acceptTerminal() { return }
        sendTerminal(.completed)
    }

    /// Stops delivery: nothing sent afterwards is delivered, queued values are dropped and
    /// the closures released.
    ///
    /// Idempotent and thread-safe; called from inside a callback, nothing more is delivered
    /// after that callback returns. A terminal event accepted before it is still delivered
    /// (with what was accepted before it): disposing right after sending a terminal event,
    /// as the passthrough subscriber does, loses nothing.
    ///
    /// The one difference between the two ways a subscriber delivers: one that keeps its turn
    /// releases its closures here (or when the delivering thread next looks); a fused one
    /// (`upstreamSerializes`, set only by library code before any event) only stops delivery,
    /// and its closures go with the terminal event or the subscriber itself — no turn tells it
    /// whether a callback runs on another thread right now.
    public func dispose() {
        var old = status.load(ordering: .acquiring)
        while true {
            if old & Self.disposedBit != 0 { return }
            let (exchanged, original) = status.compareExchange(
                expected: old, desired: old | Self.disposedBit, ordering: .acquiringAndReleasing)
            if exchanged { break }
            old = original
        }
        if old != 0 { return }  // a terminal event was accepted: it releases everything once delivered
        // Fused: no turn tells whether a delivery runs, so the closures stay until the terminal
        // event or `deinit` (see `upstreamSerializes`); the status bit already stops delivery.
        if upstreamSerializes { return }
        let me = TurnIdentity.current
        let (dropped, tookTurn) = state.withLock { state in
            (state.machine.dropOwnerless(), turn.fence(me) == me)
        }
        _ = dropped  // released here, outside the lock
        if tookTurn { look(me) }  // tidies: releases the closures
    }

    // MARK: The delivery turn

    /// Accepts the one terminal event; false once a terminal event was accepted or the
    /// subscriber disposed.
    @inlinable
    func acceptTerminal() -> Bool {
        status.compareExchange(expected: 0, desired: Self.terminalAccepted, ordering: .acquiringAndReleasing).exchanged
    }

    @inlinable
    func sendTerminal(_ event: Event<Value>) {
        if upstreamSerializes {  // fused: no turn
            enterFusedDelivery()
            defer { exitFusedDelivery() }
            return deliver(event)
        }
        let me = TurnIdentity.current
        if turn.takeFree(me) {
            deliver(event)
            finishTurn(me)
        } else {
            arrive(event, me)
        }
    }

    /// Delivers `event` while holding the turn; a terminal event releases the closures after.
    /// A value is not delivered once the subscriber is disposed.
    @inlinable
    func deliver(_ event: Event<Value>) {
        guard let callbacks else { return }
        RippleDebug.checkNoLockHeld("a subscriber's callback")
        callbacks._withUnsafeGuaranteedRef { callbacks in
            switch event {
            case .next(let value):
                if status.load(ordering: .acquiring) != Self.disposedBit { callbacks.next?(value) }
            case .error(let error): callbacks.error?(error)
            case .completed: callbacks.completed?()
            }
        }
        if event.isTerminal { releaseCallbacks() }
    }

    /// `releaseUnasked`, or the holder's look when someone asked.
    @inlinable
    func finishTurn(_ me: UInt) {
        if turn.releaseUnasked(me) { return }
        look(me)
    }

    /// The slow path of a sender that found the turn taken: `TurnMachine.arrive`.
    ///
    /// This and `look` are inlinable so that the client specializes them (unspecialized, each
    /// delivery they make asks the runtime for generic metadata), never inlined: they stay off
    /// the uncontended send's path.
    @inlinable @inline(never)
    func arrive(_ event: Event<Value>, _ me: UInt) {
        let arrival = state.withLock { state in turn.arrive(event, by: me, in: &state.machine, owner: self) }
        switch arrival {
        case .deliver:
            deliver(event)
            finishTurn(me)
        case .queued:
            return
        case .wait(let waiter):
            // Delivered for this thread, or handed the turn with its entry at the queue's head.
            if waiter.wait() { look(me) }
        }
    }

    /// The holder's slow path (`TurnMachine.look`): delivers queued events in order — ownerless
    /// ones, its own, and up to `TurnMachine.combiningBudget` for waiting threads — releases the
    /// closures once disposed, then hands the turn on or frees it.
    @inlinable @inline(never)
    func look(_ me: UInt) {
        turn.runHolder(
            me, releasesLockFree: true,
            look: { combined in
                state.withLock { state in
                    let disposedOnly = status.load(ordering: .acquiring) == Self.disposedBit
                    return turn.look(by: me, in: &state.machine, needsTidy: disposedOnly && callbacks != nil, combined: combined)
                }
            },
            deliver: { deliver($0) },
            tidy: { releaseCallbacks() })
    }

    /// Releases the closures (turn holder only), outside the lock.
    @usableFromInline
    func releaseCallbacks() {
        callbacks?.release()
        callbacks = nil
    }
}
