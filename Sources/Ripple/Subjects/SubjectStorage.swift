import Synchronization

/// The engine shared by `Subject`, `BehaviorSubject` and `ReplaySubject`: one `State` in one
/// lock, delivery outside it, and one delivery turn (`DeliveryTurn`, `TurnMachine`).
///
/// One thread at a time holds the turn and runs subscribers' callbacks, so every subscriber
/// sees every event in the order the subject accepted it, and callbacks of one subject never
/// overlap. A send that finds the turn taken by another thread first spins a moment for it
/// (`DeliveryTurn.takeSoon`, which never overtakes a queued thread); a send still shut out, or a
/// subscribe, queues its event (or replay) and waits, the queue first come first served: the holder delivers up to
/// `TurnMachine.combiningBudget` waiting threads' work for them, then hands the turn to the
/// next waiting thread, which delivers its own. It returns once delivered, after a bounded
/// amount of other threads' work, so no caller is trapped delivering a flood and no queue grows
/// with a producer that is faster than the subscribers. A send from inside a callback
/// (re-entrant, or one whose wait would close a cycle of threads waiting for each other) is
/// queued and returns; the holder delivers it after the current callback. Those queued sends
/// are the exception to both bounds: two threads looping through subjects that feed each
/// other queue cycle-breaking sends as fast as they make them (see the `DeliveryTurn` article).
///
/// An event is accepted — the history records it, a terminal event is set — under the lock
/// when its sender takes the turn or joins the queue; a new subscriber's replay is
/// snapshotted at the same point, so it sits exactly between the events accepted before and
/// after it: no gap, no duplicate. The holder owns the subscriber list (a send walks it
/// without the lock); subscriptions disposed meanwhile wait in `removals` for its next look.
/// An uncontended send costs no allocation, whatever the number of subscribers, and no lock
/// for a subject without history. Subscribe and dispose are O(1). The hot paths are
/// inlinable so clients specialize them.
@usableFromInline
final class SubjectStorage<Value, History: SubjectHistory>: TurnOwner, @unchecked Sendable where History.Value == Value {  // `held` belongs to the turn holder (ordered by the turn's acquire/release); the rest is `let`s of Sendable types
    @usableFromInline typealias Entry = SubjectSubscription<Value, History>

    /// Work done while holding the delivery turn.
    @usableFromInline
    enum Work {
        /// Deliver `event` to every subscription, walking the list in place (the turn
        /// holder owns it; callbacks' subscribes and disposes are deferred meanwhile).
        case event(Event<Value>)
        /// Add a new subscription (unless the subject had ended when it subscribed), deliver its
        /// replay, then the terminal event if the subject had ended.
        case subscribe(Entry, replay: [Value], terminal: Event<Value>?)
        /// Deliver a value to one subscription only (`sendNext(_:to:)`), unless it has left.
        case nextTo(Entry, Value)
        /// `subscribe` for a subscriber that took the free turn: its replay is the first
        /// `count` values of `replayBuffer` (never queued: run at once by that subscriber).
        case subscribeFromBuffer(Entry, count: Int, terminal: Event<Value>?)
    }

    /// What `subscribe(entry:)` decided under the lock.
    @usableFromInline
    enum Joining {
        /// The turn was free and is the subscriber's; its replay is in `replayBuffer`.
        case holding(count: Int, terminal: Event<Value>?)
        /// `TurnMachine.arrive` with the replay in an array.
        case arrived(TurnMachine<Work>.Arrival, Work)
    }

    /// Guarded by `state`.
    @usableFromInline
    struct State: @unchecked Sendable {  // values stay inside but for what the owner hands out
        @usableFromInline var history: History
        /// Set when the terminal event is accepted (entered once; never cleared).
        @usableFromInline var terminal: Event<Value>?
        /// The turn's queue.
        @usableFromInline var machine = TurnMachine<Work>()
        /// Subscriptions disposed while a delivery holds the turn; removed when it looks.
        @usableFromInline var removals: [Entry] = []

        @inlinable init(history: History) { self.history = history }
    }

    /// Who delivers now.
    @usableFromInline let turn = DeliveryTurn()
    @usableFromInline let state: Lock<State>
    /// The history's clock (`ReplaySubject` with a `maxAge`), read before locking: a user
    /// scheduler's `now` is user code.
    @usableFromInline let clock: (any Scheduler)?

    /// The clock's time, or zero without a clock. User code: read before locking.
    @inlinable var clockTime: Duration { clock?.now ?? .zero }
    /// `observe(owner:)` observations: every subscribe examines a few of them, in turn, and
    /// releases those whose owner is gone (`OwnedObservations.purge()`, O(1)).
    @usableFromInline let owned = OwnedObservations()
    /// What only the thread holding the delivery turn reads or writes: the subscriber list and
    /// the replay buffer.
    ///
    /// The invariant, in one place: every access to `held` happens on the thread that holds
    /// `turn` (or that the storage is being deinitialized, when no thread can hold it), and the
    /// turn's acquire/release orders one holder's accesses before the next holder's. The paths
    /// in are: `perform` (delivering work as the holder), `look`'s tidy, `endStream`, the free
    /// turn taken under the lock by `subscribe(entry:)` (its replay) and by `remove(_:)`, and
    /// `deinit`; tests read the count through `subscriberCount` when no delivery runs. Each path
    /// but `deinit` and `subscriberCount` starts with `checkHolder`, which debug builds turn into
    /// a precondition, so a path that forgets the turn fails the suite instead of racing.
    ///
    /// One `@exclusivity(unchecked)` covers all of it: the turn, not the runtime, guarantees
    /// the exclusive access (a dynamic check would cost some 70 instructions per access on
    /// every send).
    @usableFromInline @exclusivity(unchecked) var held = Held()

    /// The turn holder's state (see `held`).
    @usableFromInline
    struct Held {
        /// The subscriptions, in subscription order; a send walks it without the lock.
        @usableFromInline var subscribers = SubscriberList<Value, History>()
        /// A late subscriber's replay, copied here under the lock by the subscriber that takes
        /// the free delivery turn and delivered from here, so a join allocates no array. Only
        /// the thread that took the turn in `subscribe(entry:)` fills it, and it empties it
        /// (deinitializes the values, outside the lock) before giving the turn up; a subscribe
        /// from inside a callback or behind another holder is queued with an array of its own.
        /// Grows to the largest replay; freed by `deinit`.
        @usableFromInline var replayBuffer: UnsafeMutablePointer<Value>?
        @usableFromInline var replayBufferCapacity = 0

        @inlinable init() {}

        /// Replaces the (empty) replay buffer by one of at least `count` values (an
        /// allocation, no user code).
        @inlinable
        mutating func growReplayBuffer(to count: Int) {
            replayBuffer?.deallocate()
            let capacity = Swift.max(count, 16)
            replayBuffer = UnsafeMutablePointer<Value>.allocate(capacity: capacity)
            replayBufferCapacity = capacity
        }
    }

    /// Debug builds: traps unless the calling thread holds the delivery turn (see `held`).
    @inlinable @inline(__always)
    func checkHolder(_ path: StaticString) {
        #if DEBUG
        precondition(TurnIdentity.isCurrent(turn.holder),
                     "Ripple: \(path) touched a subject's subscriber list without holding its delivery turn")
        #endif
    }

    /// Mirrors `state.terminal != nil` for the lock-free send path; set under the lock.
    @usableFromInline let terminated = Atomic<Bool>(false)

    /// `remove(_:)`, as the code that made this storage specialized it: a subscription's
    /// `dispose()` is reached through `any Disposable`, so it runs unspecialized, where
    /// `remove`'s body looked up the metadata of `State`, its `Mutex` and `SubscriberList` on
    /// every call (some 1,000 instructions, a third of a subscribe and dispose). It calls this
    /// instead. No captures: no allocation, and no cycle through the storage.
    @usableFromInline let removeEntry: (SubjectStorage, Entry) -> Void

    @inlinable
    init(history: History) {
        clock = history.clock
        state = Lock(State(history: history))
        removeEntry = { storage, entry in storage.remove(entry) }
    }

    @usableFromInline var turnWord: UInt { turn.word.load(ordering: .acquiring) }

    deinit {
        held.replayBuffer?.deallocate()  // empty between turns: nothing to deinitialize
        StackGuard.run {  // the subscriptions may hold deep chains
            let remaining = held.subscribers.removeAll()
            for entry in remaining {
                entry.markEnded()
                // Nothing can reach these subscriptions any more: end them, which runs their
                // cleanup and breaks the cycle a cold signal's subscription forms through the
                // subject (subscription → passthrough → compound → subscription).
                entry.disposeReceiver()
                if !entry.isClosure { (entry.asReceiver.subscriber as? PassthroughSubscriber<Value>)?.disposeSubscription() }
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
        return held.subscribers.count
    }

    // MARK: Sending

    /// Sends `event` unless the subject has ended or `accept` (checked under the lock,
    /// against the history) says no. Returns once delivered (or queued, from inside a callback).
    @inlinable
    func send(_ event: Event<Value>, accept: ((History) -> Bool)? = nil) {
        let me = TurnIdentity.current
        // A subject without history sends a value without the lock when the turn is free:
        // the list is the turn holder's, and a terminal event is an atomic flag.
        if History.recordsNothing, accept == nil, case .next = event,
           !terminated.load(ordering: .acquiring), turn.takeFree(me) || turn.takeSoon(me) {
            if terminated.load(ordering: .acquiring) { return finishTurn(me) }
            return run(.event(event), me)
        }
        // Another thread delivers: give it a moment to finish, so this send takes the turn
        // rather than queueing and sleeping until the holder delivers for it.
        if !History.recordsNothing, turn.isHeld { turn.awaitRelease(me) }
        let work = Work.event(event)
        let now = clockTime  // user code: read before locking
        var evicted = Evicted<Value>.none
        defer { _ = evicted }  // released after unlocking: a value's deinit is user code
        let arrival: TurnMachine<Work>.Arrival? = state.withLock { state in
            guard state.terminal == nil else { return nil }
            if let accept, !accept(state.history) { return nil }
            if case .next(let value) = event {
                evicted = state.history.record(value, at: now)
            } else {
                state.terminal = event
                terminated.store(true, ordering: .releasing)
            }
            return arrive(work, me, in: &state)
        }
        if let arrival { proceed(arrival, with: work, me) }
    }

    /// Sends `value` to `subscription` alone, if it is one of this subject's and the subject
    /// has not ended; in the subject's order, like any send. Returns whether it was accepted.
    @inlinable
    func send(_ value: Value, to subscription: any Disposable) -> Bool {
        guard let entry = subscription as? Entry, entry.storage === self, !entry.isDisposed else { return false }
        let me = TurnIdentity.current
        let work = Work.nextTo(entry, value)
        let arrival: TurnMachine<Work>.Arrival? = state.withLock { state in
            guard state.terminal == nil else { return nil }
            return arrive(work, me, in: &state)
        }
        guard let arrival else { return false }
        proceed(arrival, with: work, me)
        return true
    }

    // MARK: Subscribing

    @inlinable
    func subscribe(_ subscriber: any SubscriberProtocol<Value>) -> any Disposable {
        subscribe(entry: ReceiverSubscription(subscriber, storage: self))
    }

    @inlinable
    func subscribe(next: ((Value) -> Void)?, error: ((any Error) -> Void)?, completed: (() -> Void)?) -> any Disposable {
        subscribe(entry: ClosureSubscription(next: next, error: error, completed: completed, storage: self))
    }

    /// Snapshots the replay where the subscription is accepted, then delivers it (waiting for
    /// the turn if another thread holds it); returns once the replay is delivered.
    ///
    /// A subscriber that finds the turn free takes it under the lock (`fence`, as `arrive`'s
    /// `takeFree` does) and copies its replay into the holder's `replayBuffer`: a join then
    /// allocates only its subscription (copying the replay into an array per join would cost a
    /// late subscriber to a full `ReplaySubject(capacity: 100)` two more allocations). Behind
    /// another holder, or from inside a callback, the replay is queued as an array.
    @inlinable
    func subscribe(entry: Entry) -> any Disposable {
        owned.purge()
        let me = TurnIdentity.current
        let now = clockTime  // user code: read before locking
        var expired = Evicted<Value>.none
        defer { _ = expired }  // released after unlocking
        let joining: Joining = state.withLock { state in
            let terminal = state.terminal
            let afterError = terminal?.error != nil
            if turn.fence(me) == me {
                // The turn was free and is now this thread's (the queue is empty): the replay
                // goes into the holder's reusable buffer, not a new array.
                checkHolder("subscribe")
                let count = state.history.replayCount(afterError: afterError, at: now, expired: &expired)
                if count > held.replayBufferCapacity { held.growReplayBuffer(to: count) }
                if count > 0 { state.history.copyReplay(count, into: held.replayBuffer.unsafelyUnwrapped) }
                return .holding(count: count, terminal: terminal)
            }
            let replay = state.history.replay(afterError: afterError, at: now)
            expired = replay.expired
            let work = Work.subscribe(entry, replay: replay.values, terminal: terminal)
            return .arrived(arrive(work, me, in: &state), work)
        }
        switch joining {
        case .holding(let count, let terminal):
            run(.subscribeFromBuffer(entry, count: count, terminal: terminal), me)
        case .arrived(let arrival, let work):
            proceed(arrival, with: work, me)
        }
        return entry
    }

    /// Removes a disposed subscription: at once when no delivery runs, else when the
    /// delivering thread next looks (it may be walking the list).
    @inlinable
    func remove(_ entry: Entry) {
        let me = TurnIdentity.current
        let detachNow = state.withLock { state in
            guard turn.fence(me) == me else {
                // Held by another thread, or by this one up the stack: the holder tidies when it looks.
                state.removals.append(entry)
                return false
            }
            // The turn was free, so nothing is queued and no removal waits: remove it as the
            // holder and give the turn back.
            checkHolder("remove")
            held.subscribers.remove(entry)
            turn.publish(0)
            return true
        }
        if detachNow { entry.detach() }
    }

    // MARK: The delivery turn

    /// `TurnMachine.arrive` under the lock.
    @inlinable
    func arrive(_ work: Work, _ me: UInt, in state: inout State) -> TurnMachine<Work>.Arrival {
        turn.arrive(work, by: me, in: &state.machine, owner: self)
    }

    /// After `arrive`: delivers `work` as the holder (at once, or once handed the turn), or
    /// returns when it was queued for the holder or the holder delivered it for this thread.
    @inlinable
    func proceed(_ arrival: TurnMachine<Work>.Arrival, with work: Work, _ me: UInt) {
        switch arrival {
        case .deliver:
            run(work, me)
        case .queued:
            return
        case .wait(let waiter):
            // Delivered for this thread, or handed the turn with its entry at the queue's head.
            if waiter.wait() { look(me) }
        }
    }

    /// Performs `work` as the holder, then gives the turn up or looks.
    @inlinable
    func run(_ work: Work, _ me: UInt) {
        // A subscriber may send to another subject, and so on: deep in such a chain, go on on a fresh stack.
        guard StackGuard.hasRoom() else { return StackGuard.onFreshStack { run(work, me) } }
        if perform(work) { endStream() }
        finishTurn(me)
    }

    /// `releaseUnasked`, or the holder's look when someone asked.
    @inlinable
    func finishTurn(_ me: UInt) {
        if turn.releaseUnasked(me) { return }
        look(me)
    }

    /// The holder's slow path (`TurnMachine.look`): removes disposed subscriptions, delivers
    /// queued work in order — ownerless, its own, and up to `TurnMachine.combiningBudget` for
    /// waiting threads — then hands the turn on or frees it.
    ///
    /// Inlinable so that the client specializes it (unspecialized, every delivery it makes for a
    /// waiting thread asked the runtime for generic metadata: `contended-send-4` ran 4 times
    /// slower), but never inlined: it stays off the uncontended send's path.
    @inlinable @inline(never)
    func look(_ me: UInt) {
        var removed: [Entry] = []
        turn.runHolder(
            me, releasesLockFree: true,
            look: { combined in
                state.withLock { state in
                    let look = turn.look(by: me, in: &state.machine, needsTidy: !state.removals.isEmpty, combined: combined)
                    if case .tidy = look { swap(&removed, &state.removals) }
                    return look
                }
            },
            deliver: { work in
                if perform(work) { endStream() }
            },
            tidy: {
                // No delivery can reach these any more: release their closures outside the lock.
                checkHolder("a look's tidy")
                for entry in removed {
                    held.subscribers.remove(entry)
                    entry.detach()
                }
                removed = []
            })
    }

    /// After the terminal event: every subscription has left; release them (holder only).
    @usableFromInline
    func endStream() {
        checkHolder("endStream")
        for entry in held.subscribers.removeAll() { entry.detach() }
    }

    /// Runs the user-facing part of `work`; returns whether it delivered the terminal event.
    @inlinable
    func perform(_ work: Work) -> Bool {
        RippleDebug.checkNoLockHeld("a subject's subscriber callbacks")
        checkHolder("perform")
        switch work {
        case .event(let event):
            return held.subscribers.withSlots { slots in
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
        case .nextTo(let entry, let value):
            if !entry.isDisposed { entry.deliverNext(value) }
            return false
        case .subscribe(let entry, let replay, let terminal):
            join(entry, replay: replay, terminal: terminal)
            return false
        case .subscribeFromBuffer(let entry, let count, let terminal):
            let buffer = UnsafeMutableBufferPointer(start: held.replayBuffer, count: count)
            // Emptied before the turn is given up, however the join ends; the values die here,
            // outside the lock (a value's deinit is user code).
            defer { _ = buffer.deinitialize() }
            if entry.isDisposed { return false }
            if terminal == nil { held.subscribers.append(entry) }
            if !entry.deliverEach(buffer) { return false }
            if let terminal, !entry.isDisposed { endJoin(entry, with: terminal) }
            return false
        }
    }

    /// Adds a new subscription (unless the subject had ended when it subscribed), delivers its
    /// replay, then the terminal event if the subject had ended (turn holder).
    @inlinable
    func join(_ entry: Entry, replay: [Value], terminal: Event<Value>?) {
        if entry.isDisposed { return }
        // Not ended when it subscribed: join now, so events accepted after it reach it.
        if terminal == nil { held.subscribers.append(entry) }
        if !entry.deliverEach(replay) { return }
        if let terminal, !entry.isDisposed { endJoin(entry, with: terminal) }
    }

    /// Delivers the terminal event a subscriber joining an ended subject gets after its replay.
    @inlinable
    func endJoin(_ entry: Entry, with terminal: Event<Value>) {
        entry.deliver(terminal)
        entry.markEnded()
        entry.detach()  // never joined the list: nothing else will release it
    }
}
