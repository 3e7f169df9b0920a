/// Building blocks shared by the operators: how an operator subscribes upstream on behalf
/// of its downstream subscriber.
extension SignalProtocol {
    /// Builds an operator: for each subscription, `makeUpstream` receives the downstream
    /// subscriber and returns the `Subscriber` that handles upstream's events.
    ///
    /// The returned `Subscriber` serializes upstream events, so the closures it holds may
    /// keep per-subscription state in captured variables without a lock. Disposing the
    /// result disposes the upstream subscription.
    ///
    /// `makeUpstream`'s closures must call `downstream` only synchronously, from inside
    /// themselves: the result is then a signal that sends serially (`Signal.sendsSerially`),
    /// and a stage subscribed to it is fused behind this one — when `self` is such a signal
    /// too, the relay takes no delivery turn of its own (cold-path fusion, <doc:DeliveryTurn>).
    @inlinable
    func lift<U>(_ makeUpstream: @escaping (PassthroughSubscriber<U>) -> Subscriber<Value>) -> Signal<U> {
        Signal(sendsSerially: true) { downstream in
            subscribe(relay: makeUpstream(downstream), for: downstream.disposable)
            return nil
        }
    }

    /// Subscribes an operator's `relay` to `self` for the downstream subscription `downstream`
    /// (`lift`'s relays and a stage run's, `fuse`).
    ///
    /// On a `Signal`, the upstream subscription joins the downstream one *before* its producer
    /// runs (RAC's `didSubscribeWithDisposable:`): a stage below that ends the subscription while
    /// a synchronous source runs — `take`'s completion, an error, a dispose from a callback —
    /// disposes the relay, whose status the source's loop checks, so the source stops at once
    /// instead of running on to its end (`from` over a huge range behind `take`); and the relay
    /// is subscribed exclusively, so it is fused behind a signal that sends serially.
    ///
    /// On any other source, disposing the downstream disposes the relay even when `self` (a
    /// subject, or a conformer of the user's) keeps it: the stages fused behind the relay, and the
    /// user's closures at the end, go with its closures at once.
    @inlinable
    func subscribe(relay: Subscriber<Value>, for downstream: CompoundDisposable) {
        guard let signal = self as? Signal<Value> else {
            downstream.add(relay)
            downstream.add(subscribe(relay))
            return
        }
        let upstream = CompoundDisposable()
        downstream.add(upstream)
        signal.subscribe(exclusively: relay, into: upstream)
    }
}

extension SignalProtocol {
    /// Subscribes `subscriber` to `self` on behalf of an operator's subscription, and hands the
    /// new subscription's disposable to `link`, which puts it where the operator's subscription
    /// disposes it: the downstream passthrough's compound, or a slot the operator owns (a
    /// `SerialDisposable` it reuses, a driver's compound).
    ///
    /// For a `Signal`, `link` receives the new subscription's compound *before* its producer
    /// runs, as `lift` links its upstream (RAC's `didSubscribeWithDisposable:`). An operator that
    /// subscribes inside its own subscribe closure — `subscribe(on:)`, `take(during:)`, `catch`,
    /// `concatMap`, `take(until:)`, … — would otherwise get the inner subscription's disposable
    /// only once the inner `subscribe` returned: a synchronous source behind it (`from` over a
    /// huge range) that the operator's subscription ends while it runs — a dispose from a
    /// callback or another thread, a downstream `take`, a trigger, a lifetime — would run on to
    /// its end, calling the closures of the stages before the operator for nothing. Linked
    /// first, the end disposes the inner subscription at once (down to the relay whose status
    /// the source's loop checks), and the source stops within an element. When `link` disposes
    /// the compound at once (the operator's subscription already ended), `self` is not
    /// subscribed at all.
    ///
    /// For any other source (a subject, a conformer of the user's), `link` receives what
    /// `subscribe` returned, as before: such a source runs no producer of Ripple's.
    ///
    /// Each call links one subscription: an operator that subscribes again and again (`concat`'s
    /// inner signals, `retry`'s attempts) links into a slot that replaces, or removes, the
    /// previous one, so the outer subscription does not collect ended children.
    @inlinable
    func subscribe(_ subscriber: any SubscriberProtocol<Value>, linking link: (any Disposable) -> Void) {
        guard let signal = self as? Signal<Value> else { return link(subscribe(subscriber)) }
        let subscription = CompoundDisposable()
        link(subscription)
        if subscription.isDisposed { return }
        signal.subscribe(subscriber, into: subscription)
    }

    /// `subscribe(_:linking:)` into `compound` — most often the operator's downstream
    /// subscription (`downstream.disposable`).
    @inlinable
    func subscribe(_ subscriber: any SubscriberProtocol<Value>, linkingInto compound: CompoundDisposable) {
        subscribe(subscriber, linking: { compound.add($0) })
    }

    /// `subscribe(linking:next:error:completed:)` into `compound` — most often the operator's
    /// downstream subscription (`downstream.disposable`).
    @inlinable
    func subscribe(
        linkingInto compound: CompoundDisposable,
        next: ((Value) -> Void)?,
        error: ((any Error) -> Void)?,
        completed: (() -> Void)?
    ) {
        subscribe(linking: { compound.add($0) }, next: next, error: error, completed: completed)
    }

    /// `subscribe(_:linking:)` for closures, subscribed as `subscribe(next:error:completed:)`
    /// subscribes them from nonisolated code (`makeSubscription`: on a `Signal`, a `Subscriber`
    /// only this subscription reaches, fused behind a signal that sends serially).
    @inlinable
    func subscribe(
        linking link: (any Disposable) -> Void,
        next: ((Value) -> Void)?,
        error: ((any Error) -> Void)?,
        completed: (() -> Void)?
    ) {
        guard let signal = self as? Signal<Value> else {
            return link(makeSubscription(next: next, error: error, completed: completed))
        }
        let subscription = CompoundDisposable()
        link(subscription)
        if subscription.isDisposed { return }
        signal.subscribe(exclusively: Subscriber(next: next, error: error, completed: completed), into: subscription)
    }
}

extension Subscriber {
    /// An operator's upstream subscriber: `next` handles values; errors and completion are
    /// forwarded to `downstream` unless `error` or `completed` say otherwise.
    @inlinable
    static func relay<U>(
        to downstream: PassthroughSubscriber<U>,
        next: @escaping (Value) -> Void,
        error: ((any Error) -> Void)? = nil,
        completed: (() -> Void)? = nil
    ) -> Subscriber<Value> {
        Subscriber(
            relayDepth: downstream.relayDepth &+ 1, levels: 1,
            next: next,
            error: error ?? { downstream.sendError($0) },
            completed: completed ?? { downstream.sendCompleted() })
    }
}

/// One stage's per-subscription state (`scan`'s accumulator), read and written only by that
/// stage's relay callbacks.
///
/// Those callbacks never overlap (the relay's delivery turn, or fusion behind a stage that
/// has one), so the accesses need no lock — nor the runtime's dynamic exclusivity check that
/// a captured `var` gets (`swift_beginAccess`, some 60 instructions per access, the largest
/// cost of `scan` on the cold pipeline).
@usableFromInline
final class StageState<State> {
    @usableFromInline @exclusivity(unchecked) var value: State
    @inlinable init(_ value: State) { self.value = value }
}

/// Forwards events to one downstream subscriber in the order they were enqueued, one at a
/// time, each from the thread that enqueued it.
///
/// Multi-source and timed operators decide what to send under their own lock and `enqueue`
/// there (it never runs user code), then call `drain()` after unlocking; so the decision
/// order is the delivery order and no lock is held while user code runs. It is an owner of a
/// delivery turn (`TurnMachine.enqueue`): `drain()` delivers the caller's own events, waiting
/// for its turn if another thread is delivering, and returns once they are delivered; events
/// enqueued from inside a downstream callback are delivered by the thread holding the turn.
/// So no thread is kept delivering other threads' events, and the queue holds at most the
/// events of the threads waiting on it.
final class SerialForwarder<Value>: TurnOwner, @unchecked Sendable {  // queue behind its lock, `downstream` called only by the turn holder; reached from other threads only through Sendable signals
    // @unchecked: `state` guards the queue; `downstream` is immutable and serializes by itself.
    private let downstream: any SubscriberProtocol<Value>
    private let turn = DeliveryTurn()
    /// What is decided under the lock (`ForwarderState`: its invariants live there).
    private let state = Lock(ForwarderState<Value>())

    init(_ downstream: any SubscriberProtocol<Value>) {
        self.downstream = downstream
    }

    var turnWord: UInt { turn.word.load(ordering: .acquiring) }

    /// Queues `event` (events after a terminal one are dropped). Safe to call under a lock;
    /// call `drain()` after unlocking.
    func enqueue(_ event: Event<Value>) {
        let me = TurnIdentity.current
        state.withLock { state in
            guard state.accept(event) else { return }
            _ = turn.enqueue(event, by: me, in: &state.machine, owner: self)
        }
    }

    /// Delivers what this thread enqueued, waiting for its turn if another thread delivers;
    /// returns once it is delivered (or left to the holder, from inside a callback).
    func drain() {
        let me = TurnIdentity.current
        while true {
            // An owned entry brings exactly one wake (delivered for this thread, or the turn):
            // wait for it even when the entry is already gone.
            if TurnWaiter.ofCurrentThread.expectsWake {
                if !TurnWaiter.ofCurrentThread.wait() { continue }
                look(me)
                continue
            }
            let step = state.withLock { state in state.drainStep(by: me, holder: turn.holder) }
            if step == .done { return }
            look(me)
        }
    }

    /// The holder's loop (`TurnMachine.look`): delivers its own and ownerless events in order,
    /// and up to `TurnMachine.combiningBudget` for waiting threads, then hands the turn on or frees it.
    private func look(_ me: UInt) {
        turn.runHolder(
            me, releasesLockFree: false,  // every look goes through the lock: it keeps `isLooking`
            look: { combined in
                state.withLock { state in
                    let look = turn.look(by: me, in: &state.machine, needsTidy: false, combined: combined)
                    state.looked(look)
                    return look
                }
            },
            deliver: { downstream.send($0) },
            tidy: {})
    }

    /// Queues and delivers `event`.
    func send(_ event: Event<Value>) {
        enqueue(event)
        drain()
    }

    /// Queues the end of a timed operator's stream: completion first sends the value it was
    /// holding back; an error drops it. Safe to call under the operator's lock.
    ///
    /// - Returns: The value taken out of `waiting` (sent or dropped), for the caller to
    ///   release after unlocking: its deinit is user code.
    func enqueueEnd(_ event: Event<Value>, flushing waiting: inout Value?) -> Value? {
        let value = waiting.take()
        if case .completed = event, let value { enqueue(.next(value)) }
        enqueue(event)
        return value
    }
}

/// The state of an operator over an array of sources (`zip`, `combineLatest`): it hears
/// each source's events tagged with the source's index.
protocol IndexedSourcesDriver<Value>: Sendable {
    associatedtype Value
    func next(_ value: Value, at index: Int)
    func completed(at index: Int)
    func fail(_ error: any Error)
}

extension IndexedSourcesDriver {
    /// Subscribes every source in order, tagging its events with its index, each linked into
    /// `downstream`'s subscription before it runs (`subscribe(linking:)`: a synchronous source
    /// stops as soon as the result ends); stops early if `downstream` ended meanwhile.
    func subscribe<U>(to sources: [any SignalProtocol<Value>], for downstream: PassthroughSubscriber<U>) {
        for (index, source) in sources.enumerated() {
            if downstream.isDisposed { break }
            source.subscribe(
                linkingInto: downstream.disposable,
                next: { self.next($0, at: index) },
                error: { self.fail($0) },
                completed: { self.completed(at: index) })
        }
    }
}
