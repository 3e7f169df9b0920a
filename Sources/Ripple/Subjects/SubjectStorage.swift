import Synchronization

/// The engine shared by `Subject`, `BehaviorSubject` and `ReplaySubject`: one `State` in one
/// lock, delivery outside it, re-entrant and concurrent work queued and drained in order.
///
/// One thread at a time holds the *delivery turn*. A send, subscribe or terminal event that
/// finds the turn taken (by another thread, or by this one from inside a callback) is
/// queued and returns; the thread holding the turn drains the queue FIFO. So every
/// subscriber sees every event in send order, callbacks of one subject never overlap, and
/// no lock is held while user code runs.
///
/// The turn is an atomic; its holder owns the subscriber list and gives the turn back with
/// one compare-and-swap when nothing was queued meanwhile. An uncontended send costs no
/// allocation, whatever the number of subscribers, and no lock for a subject without
/// history (one lock acquisition to record the value otherwise). A new subscriber's replay
/// (`History`) is snapshotted when it subscribes and delivered in queue order, so it sits
/// exactly between the events sent before and after it: no gap, no duplicate. Subscribe
/// and dispose are O(1). The hot paths are inlinable so clients specialize them.
@usableFromInline
final class SubjectStorage<Value, History: SubjectHistory>: @unchecked Sendable where History.Value == Value {
    @usableFromInline typealias Entry = SubjectSubscription<Value, History>

    /// Work done while holding the delivery turn.
    @usableFromInline
    enum Work {
        /// Deliver `event` to every subscription, walking the list in place (the turn
        /// holder owns it; callbacks' subscribes and disposes are deferred meanwhile).
        case event(Event<Value>)
        /// Deliver a new subscription's replay, then the terminal event if the subject had ended.
        case subscribe(Entry, replay: [Value], terminal: Event<Value>?)
    }

    /// Queued while another delivery holds the turn.
    @usableFromInline
    enum Pending {
        case event(Event<Value>)
        case subscribe(Entry, replay: [Value], terminal: Event<Value>?)
    }

    /// Guarded by `state`.
    @usableFromInline
    struct State: @unchecked Sendable {
        @usableFromInline var history: History
        /// Set when the terminal event is sent (entered once; never cleared).
        @usableFromInline var terminal: Event<Value>?
        @usableFromInline var pending = FIFOQueue<Pending>()
        /// Subscriptions disposed while a delivery holds the turn; removed when it looks.
        @usableFromInline var removals: [Entry] = []

        @inlinable init(history: History) { self.history = history }
    }

    /// Who delivers now; taken only under the lock, given back by `releaseIfUnasked` without
    /// it. The holder looks at the queue and the removals when asked.
    @usableFromInline let turn = DeliveryTurn()
    @usableFromInline let state: Lock<State>
    /// The subscriptions. Read and written only by the thread holding the delivery turn
    /// (the turn's acquire/release orders the accesses), so a send can walk it without
    /// the lock.
    @usableFromInline @exclusivity(unchecked) var subscribers = SubscriberList<Value, History>()
    /// Mirrors `state.terminal != nil` for the lock-free send path; set under the lock.
    @usableFromInline let terminated = Atomic<Bool>(false)

    @inlinable
    init(history: History) {
        state = Lock(State(history: history))
    }

    deinit {
        StackGuard.run {  // the subscriptions may hold deep chains
            let remaining = subscribers.removeAll()
            for entry in remaining {
                entry.markEnded()
                // Nothing can reach these subscriptions any more: end them, which runs their
                // cleanup and breaks the cycle a cold signal's subscription forms through the
                // subject (subscription → passthrough → compound → subscription).
                (entry.subscriber as? Subscriber<Value>)?.dispose()
                (entry.subscriber as? PassthroughSubscriber<Value>)?.disposeSubscription()
                entry.detach()  // breaks cycles through closures that capture their own subscription
            }
        }
    }

    // MARK: Reading

    /// Reads the history under the lock.
    @inlinable
    func withHistory<R>(_ body: (inout History) -> R) -> R {
        state.withLock { body(&$0.history) }
    }

    @usableFromInline var terminalEvent: Event<Value>? { state.withLock { $0.terminal } }

    /// The number of subscriptions (for tests, when no delivery runs).
    @usableFromInline var subscriberCount: Int {
        _ = turn.isHeld  // acquire: see the last holder's writes
        return subscribers.count
    }

    // MARK: Sending

    /// Sends `event` unless the subject has ended or `accept` (checked under the lock,
    /// against the history) says no.
    @inlinable
    func send(_ event: Event<Value>, accept: ((History) -> Bool)? = nil) {
        // A subject without history sends a value without the lock when the turn is free:
        // the list is the turn holder's, and a terminal event is an atomic flag.
        if History.recordsNothing, accept == nil, case .next = event,
           !terminated.load(ordering: .acquiring), takeTurn() {
            if terminated.load(ordering: .acquiring) {
                finishTurn()
            } else {
                deliver(.event(event))
            }
            return
        }
        let work: Work? = state.withLock { state in
            guard state.terminal == nil else { return nil }
            if let accept, !accept(state.history) { return nil }
            if case .next(let value) = event {
                state.history.record(value)
            } else {
                state.terminal = event
                terminated.store(true, ordering: .releasing)
            }
            if takeTurn() { return .event(event) }
            return enqueue(.event(event), in: &state)
        }
        if let work { deliver(work) }
    }

    /// Gives up a turn taken for nothing, delivering whatever was queued meanwhile.
    @inlinable
    func finishTurn() {
        if turn.releaseIfUnasked() { return }
        let work: Work? = state.withLock { state in nextWork(&state) }
        if let work { deliver(work) }
    }

    // MARK: Subscribing

    @inlinable
    func subscribe(_ subscriber: any SubscriberProtocol<Value>) -> any Disposable {
        subscribe(entry: Entry(subscriber, storage: self))
    }

    @inlinable
    func subscribe(next: ((Value) -> Void)?, error: ((any Error) -> Void)?, completed: (() -> Void)?) -> any Disposable {
        subscribe(entry: Entry(next: next, error: error, completed: completed, storage: self))
    }

    @inlinable
    func subscribe(entry: Entry) -> any Disposable {
        let work: Work? = state.withLock { state in
            let terminal = state.terminal
            let replay = state.history.replay(afterError: terminal?.error != nil)
            if takeTurn() {
                if terminal == nil { subscribers.append(entry) }
                return .subscribe(entry, replay: replay, terminal: terminal)
            }
            return enqueue(.subscribe(entry, replay: replay, terminal: terminal), in: &state)
        }
        if let work { deliver(work) }
        return entry
    }

    /// Removes a disposed subscription: at once when no delivery runs, else when the
    /// delivering thread next looks (it may be walking the list).
    @usableFromInline
    func remove(_ entry: Entry) {
        let detachNow = state.withLock { state in
            if takeTurn() {
                // No delivery runs (and nothing is queued): remove it now, as the turn holder.
                subscribers.remove(entry)
                turn.release()
                return true
            }
            state.removals.append(entry)
            if turn.requestLook() { return false }
            // The turn came free meanwhile and this thread took it: tidy up and give it back.
            for removed in state.removals { subscribers.remove(removed) }
            state.removals = []
            turn.release()
            return true
        }
        if detachNow { entry.detach() }
    }

    // MARK: The delivery turn (under the lock, but for `deliver`)

    @inlinable
    func takeTurn() -> Bool { turn.take() }

    /// Queues `pending` for the turn holder; if the turn came free, takes it and returns the next work.
    @inlinable
    func enqueue(_ pending: Pending, in state: inout State) -> Work? {
        state.pending.append(pending)
        return turn.requestLook() ? nil : nextWork(&state)
    }

    /// Takes the next queued work for the turn holder, or gives the turn up when there is none.
    @inlinable
    func nextWork(_ state: inout State) -> Work? {
        while let pending = state.pending.popFirst() {
            let work: Work
            switch pending {
            case .event(let event):
                work = .event(event)
            case .subscribe(let entry, let replay, let terminal):
                if entry.isDisposed { continue }
                // Not ended when it subscribed: a terminal event sent since is queued behind this.
                if terminal == nil { subscribers.append(entry) }
                work = .subscribe(entry, replay: replay, terminal: terminal)
            }
            let mustLook = !state.pending.isEmpty || !state.removals.isEmpty
            turn.keep(mustLook: mustLook)
            return work
        }
        turn.release()
        return nil
    }

    /// Performs `first`, then everything queued meanwhile, then gives up the turn.
    @inlinable
    func deliver(_ first: Work) {
        // A subscriber may send to another subject, and so on: deep in such a chain, go on on a fresh stack.
        guard StackGuard.hasRoom() else { return StackGuard.onFreshStack { deliver(first) } }
        var next: Work? = first
        while let work = next.take() {
            let endedStream = perform(work)
            if !endedStream && turn.releaseIfUnasked() { return }
            var released: [Entry] = []
            next = state.withLock { state in
                if endedStream { released = subscribers.removeAll() }
                for entry in state.removals { subscribers.remove(entry) }
                released.append(contentsOf: state.removals)
                state.removals = []
                return nextWork(&state)
            }
            // No delivery can reach these any more: release their closures outside the lock.
            for entry in released { entry.detach() }
        }
    }

    /// Runs the user-facing part of `work`; returns whether it delivered the terminal event.
    @inlinable
    func perform(_ work: Work) -> Bool {
        switch work {
        case .event(let event):
            return subscribers.slots.withUnsafeBufferPointer { slots in
                if case .next(let value) = event {
                    for case let unmanaged? in slots {
                        unmanaged._withUnsafeGuaranteedRef { entry in
                            if !entry.isDisposed { entry.deliverNext(value) }
                        }
                    }
                    return false
                }
                for case let unmanaged? in slots {
                    unmanaged._withUnsafeGuaranteedRef { entry in
                        if !entry.isDisposed {
                            entry.deliver(event)
                            entry.markEnded()
                        }
                    }
                }
                return true
            }
        case .subscribe(let entry, let replay, let terminal):
            for value in replay {
                if entry.isDisposed { return false }
                entry.deliverNext(value)
            }
            if let terminal, !entry.isDisposed {
                entry.deliver(terminal)
                entry.markEnded()
                entry.detach()  // never joined the list: nothing else will release it
            }
            return false
        }
    }
}
