import Synchronization

/// The reference count behind `autoconnect()` and `share()`: the first subscriber connects,
/// the last one leaving disconnects, and a connect and a disconnect never overlap.
///
/// RxSwift's `refCount` connects under a recursive lock; Ripple never runs user code (the
/// source's subscribe and dispose) under a lock, so the phases say who is doing what and
/// other threads wait for them outside the lock:
///
/// - `idle`: no connection. A subscriber arriving makes one (`make`, objects only) and
///   connects it, after subscribing itself to it.
/// - `connecting(by:)`: that thread runs the source's subscribe. A subscriber arriving on
///   another thread is counted and waits until it ends, so that once its `subscribe` returns
///   the source is connected (nothing sent upstream after that is lost); one arriving on the
///   connecting thread itself (from inside the source's subscribe) does not wait for itself.
/// - `connected`: subscribers are counted in and out; the last one out disconnects.
/// - `disconnecting(by:)`: that thread disposes the upstream subscription. A subscriber
///   arriving on another thread waits until it ends and starts a fresh connection, so two
///   upstream subscriptions never feed one subject at once.
///
/// When the source ends, the connection is reset before its terminal event reaches any
/// subscriber (`sourceEnded`, RxSwift's `refCount` does the same): `connecting` or `connected`
/// goes back to `idle`, the count to zero, and the upstream subscription is disposed. A
/// subscriber arriving from a terminal callback (a `retry`) or later starts a fresh connection;
/// the subscribers of the ended one are not counted out of it (`leave` checks the connection's
/// number, `generation`), so they never disconnect the fresh one. A thread still inside the
/// source's subscribe when it ended finds its connection gone and disposes what `connect`
/// returned.
///
/// Waiting is the delivery turn's: the connection is a `TurnOwner` held by the thread
/// connecting or disconnecting, and a subscriber waits only if the wait-for graph shows no
/// cycle (say it subscribes from a callback whose turn the connecting source is about to
/// need). Where waiting would deadlock it does not wait: a joiner returns before the source
/// is connected, and a subscriber arriving during a disconnect (or on the disconnecting
/// thread, from the upstream's dispose) connects afresh while the old upstream is still
/// being disposed.
///
/// Invariants (under `state`): `count` is the number of subscribers counted into connection
/// `generation` and not yet out; `current` is non-nil exactly while `connecting` or
/// `connected`; every waiter is woken when the phase it waited on ends — connect waiters when
/// a connect ends or its source ends, disconnect waiters when a disconnect ends — and woken
/// waiters re-check the phase and the generation.
final class SharedConnection<Connection: AnyObject>: TurnOwner, @unchecked Sendable {  // phase machine behind its lock; the connection crosses threads only through signals that are Sendable when their values are
    // @unchecked: `state` guards all mutable state; `make` and `connect` are immutable; `actor` is atomic.
    enum Phase: Equatable {
        case idle
        case connecting(by: UInt)
        case connected
        case disconnecting(by: UInt)
    }

    /// Guarded by `state`.
    private struct State: @unchecked Sendable {  // the connection and disposable only leave to the thread acting on them
        var phase = Phase.idle
        var count = 0
        /// The number of the latest connection started: `current`'s, while there is one.
        var generation: UInt64 = 0
        var current: Connection?
        var disposable: (any Disposable)?
        /// Threads waiting for a connect to end.
        var connectWaiters: [TurnWaiter] = []
        /// Threads waiting for a disconnect to end.
        var disconnectWaiters: [TurnWaiter] = []

        /// Takes the connect waiters, to be woken after unlocking.
        mutating func takeConnectWaiters() -> [TurnWaiter] {
            defer { connectWaiters = [] }
            return connectWaiters
        }

        /// Takes the disconnect waiters, to be woken after unlocking.
        mutating func takeDisconnectWaiters() -> [TurnWaiter] {
            defer { disconnectWaiters = [] }
            return disconnectWaiters
        }
    }

    /// What a joining subscriber does once it has subscribed to the connection.
    enum Join: Sendable {
        /// Connect it: this subscriber is the first.
        case connect
        /// Wait until the connecting thread is done (the wait is registered only then: the
        /// calling thread's `TurnWaiter` must not be woken for it while it still subscribes,
        /// which may wait for a delivery turn with that same waiter).
        case waitForConnect
        /// Nothing: connected already, or connecting on this very thread.
        case joined
    }

    /// A subscriber's place in one connection: what to do after subscribing, and the
    /// connection's number, so that leaving an ended connection does not count out of a later one.
    struct Ticket: Sendable {
        let join: Join
        let generation: UInt64
    }

    private let state = Lock(State())
    /// The thread connecting or disconnecting, else 0: the holder the wait-for graph sees.
    /// Written under `state` with every phase change.
    private let actor = Atomic<UInt>(0)

    var turnWord: UInt { actor.load(ordering: .acquiring) }

    /// Sets the phase and publishes who acts in it (under the lock).
    private func enter(_ phase: Phase, _ state: inout State) {
        state.phase = phase
        switch phase {
        case .connecting(let thread), .disconnecting(let thread): actor.store(thread, ordering: .releasing)
        case .idle, .connected: actor.store(0, ordering: .releasing)
        }
    }

    /// Registers the calling thread as waiting for the phase's thread, unless that would
    /// close a cycle (under the lock).
    private func startWaiting(_ state: inout State) -> TurnWaiter? {
        let waiter = TurnWaiter.ofCurrentThread
        guard WaitGraph.startWaiting(waiter, for: self) else { return nil }
        if case .connecting = state.phase {
            state.connectWaiters.append(waiter)
        } else {
            state.disconnectWaiters.append(waiter)
        }
        return waiter
    }

    private let make: @Sendable () -> Connection
    private let connect: @Sendable (Connection, _ ended: @escaping () -> Void) -> any Disposable

    /// - Parameters:
    ///   - make: Builds a connection (no user code: it runs under the lock).
    ///   - connect: Connects one to the source (user code: runs outside the lock). `ended`
    ///     resets the count for that connection (`sourceEnded`): call it when the source ends,
    ///     before its terminal event is forwarded.
    init(
        make: @escaping @Sendable () -> Connection,
        connect: @escaping @Sendable (Connection, _ ended: @escaping () -> Void) -> any Disposable
    ) {
        self.make = make
        self.connect = connect
    }

    /// Counts a subscriber in and returns the connection to subscribe to, and its ticket: what
    /// to do after subscribing (`finishJoin`), and the connection to leave (`leave`). Waits
    /// first if another thread is disconnecting.
    func join() -> (Connection, Ticket) {
        let me = TurnIdentity.current
        while true {
            let (connection, ticket, retry): (Connection?, Ticket?, TurnWaiter?) = state.withLock { state in
                let join: Join
                switch state.phase {
                case .idle:
                    let (connection, ticket) = start(&state, me)
                    return (connection, ticket, nil)
                case .disconnecting(let thread):
                    // From the upstream's dispose on its own thread, or where waiting would
                    // deadlock: connect afresh at once.
                    guard thread != me, let waiter = startWaiting(&state) else {
                        let (connection, ticket) = start(&state, me)
                        return (connection, ticket, nil)
                    }
                    return (nil, nil, waiter)
                case .connecting(let thread):
                    join = thread == me ? .joined : .waitForConnect
                case .connected:
                    join = .joined
                }
                state.count += 1
                return (state.current, Ticket(join: join, generation: state.generation), nil)
            }
            if let connection, let ticket { return (connection, ticket) }
            _ = retry?.wait()
        }
    }

    /// Starts connecting as the first subscriber (under the lock).
    private func start(_ state: inout State, _ me: UInt) -> (Connection, Ticket) {
        let connection = make()
        enter(.connecting(by: me), &state)
        state.generation &+= 1
        state.count = 1
        state.current = connection
        return (connection, Ticket(join: .connect, generation: state.generation))
    }

    /// After subscribing to the connection `join` returned: connects it, or waits for the
    /// thread connecting it.
    func finishJoin(_ connection: Connection, _ ticket: Ticket) {
        switch ticket.join {
        case .joined:
            return
        case .waitForConnect:
            let me = TurnIdentity.current
            while true {  // until no thread but this one is connecting this connection
                let waiter: TurnWaiter? = state.withLock { state in
                    guard state.generation == ticket.generation,
                          case .connecting(let thread) = state.phase, thread != me else { return nil }
                    return startWaiting(&state)  // nil where waiting would close a cycle
                }
                guard let waiter else { return }
                _ = waiter.wait()
            }
        case .connect:
            let disposable = connect(connection, { [weak self] in self?.sourceEnded(connection) })
            let me = TurnIdentity.current
            let (disconnect, waiters, released, orphaned): ((any Disposable)?, [TurnWaiter], Connection?, (any Disposable)?) = state.withLock { state in
                guard state.generation == ticket.generation, state.phase == .connecting(by: me) else {
                    // The source ended while it connected: `sourceEnded` reset the count and
                    // woke the waiters; nothing here is this connection's any more.
                    return (nil, [], nil, disposable)
                }
                if state.count == 0 {  // everyone left while it connected
                    enter(.disconnecting(by: me), &state)
                    defer { state.current = nil }
                    return (disposable, state.takeConnectWaiters(), state.current, nil)
                }
                enter(.connected, &state)
                state.disposable = disposable
                return (nil, state.takeConnectWaiters(), nil, nil)
            }
            for waiter in waiters { waiter.done() }
            if let disconnect { finishDisconnecting(disconnect, me) }
            orphaned?.dispose()
            _ = released  // released here, after unlocking: its subject's teardown may run user code
        }
    }

    /// Counts a subscriber out of the connection its ticket names; the last one disconnects.
    /// A subscriber of a connection whose source ended (`sourceEnded` reset the count) is
    /// not counted out: it must not disconnect a later connection.
    func leave(_ ticket: Ticket) {
        let me = TurnIdentity.current
        let (disconnect, released): ((any Disposable)?, Connection?) = state.withLock { state in
            guard state.generation == ticket.generation, state.current != nil else { return (nil, nil) }
            state.count -= 1
            guard state.count == 0, state.phase == .connected else { return (nil, nil) }  // connecting: its thread disconnects
            enter(.disconnecting(by: me), &state)
            defer {
                state.disposable = nil
                state.current = nil
            }
            return (state.disposable, state.current)
        }
        if let disconnect { finishDisconnecting(disconnect, me) }
        _ = released  // released here, after unlocking: its subject's teardown may run user code
    }

    /// The source of `connection` ended: if it is still the current connection, resets the
    /// count (`idle`, no subscribers counted), wakes the threads waiting for its connect, and
    /// disposes its upstream subscription — all before the terminal event is forwarded, so a
    /// subscriber arriving from a terminal callback starts a fresh connection.
    ///
    /// A thread still connecting it (the source ended inside its subscribe) disposes what
    /// `connect` returned itself (`finishJoin`).
    func sourceEnded(_ connection: Connection) {
        let (disposable, waiters, released): ((any Disposable)?, [TurnWaiter], Connection?) = state.withLock { state in
            guard let current = state.current, current === connection else { return (nil, [], nil) }
            defer {
                state.current = nil
                state.disposable = nil
                state.count = 0
            }
            enter(.idle, &state)
            return (state.disposable, state.takeConnectWaiters(), current)
        }
        for waiter in waiters { waiter.done() }
        disposable?.dispose()
        _ = released  // released here, after unlocking: its subject's teardown may run user code
    }

    /// Disposes the upstream subscription, then lets waiting subscribers connect afresh.
    private func finishDisconnecting(_ disposable: any Disposable, _ me: UInt) {
        disposable.dispose()
        let waiters = state.withLock { state in
            if state.phase == .disconnecting(by: me) { enter(.idle, &state) }
            return state.takeDisconnectWaiters()
        }
        for waiter in waiters { waiter.done() }
    }
}
