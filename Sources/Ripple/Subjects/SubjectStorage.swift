/// The engine shared by `Subject`, `BehaviorSubject` and `ReplaySubject`: one `State` in one
/// lock, delivery outside it, re-entrant and concurrent work queued and drained in order.
///
/// One thread at a time holds the *delivery turn*. A send, subscribe or terminal event that
/// finds the turn taken (by another thread, or by this one from inside a callback) is
/// queued and returns; the thread holding the turn drains the queue FIFO. So every
/// subscriber sees every event in send order, callbacks of one subject never overlap, and
/// no lock is held while user code runs.
///
/// A new subscriber's replay (`History`) is snapshotted when it subscribes and delivered in
/// queue order, so it sits exactly between the events sent before and after it: no gap and
/// no duplicate, even while other threads send. A send costs two lock acquisitions and no
/// allocation whatever the number of subscribers; subscribe and dispose are O(1).
final class SubjectStorage<Value, History: SubjectHistory>: @unchecked Sendable where History.Value == Value {
    typealias Entry = SubjectSubscription<Value, History>
    typealias Snapshot = ContiguousArray<Entry?>

    /// Work done while holding the delivery turn.
    enum Work {
        /// Deliver `event` to the subscriptions in `snapshot`.
        case event(Event<Value>, Snapshot)
        /// Deliver a new subscription's replay, then the terminal event if the subject had ended.
        case subscribe(Entry, replay: [Value], terminal: Event<Value>?)
    }

    /// Queued while another delivery holds the turn.
    enum Pending {
        case event(Event<Value>)
        case subscribe(Entry, replay: [Value], terminal: Event<Value>?)
    }

    /// Guarded by `state`.
    struct State: @unchecked Sendable {
        var history: History
        var subscribers = SubscriberList<Value, History>()
        /// Set when the terminal event is sent (entered once; never cleared).
        var terminal: Event<Value>?
        /// Set while a thread holds the delivery turn.
        var isDelivering = false
        var pending = FIFOQueue<Pending>()
        /// Subscriptions disposed while a delivery walks a snapshot; removed when it ends,
        /// so the snapshot's storage is not copied.
        var removals: [Entry] = []
    }

    private let state: Lock<State>

    init(history: History) {
        state = Lock(State(history: history))
    }

    deinit {
        let remaining = state.withLock { $0.subscribers.removeAll() }
        for case let entry? in remaining { entry.dispose() }
    }

    // MARK: Reading

    /// Reads the history under the lock.
    func withHistory<R>(_ body: (inout History) -> R) -> R {
        state.withLock { body(&$0.history) }
    }

    var terminalEvent: Event<Value>? { state.withLock { $0.terminal } }

    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    // MARK: Sending

    /// Sends `event` unless the subject has ended or `accept` (checked under the lock,
    /// against the history) says no.
    func send(_ event: Event<Value>, accept: ((History) -> Bool)? = nil) {
        let work: Work? = state.withLock { state in
            guard state.terminal == nil else { return nil }
            if let accept, !accept(state.history) { return nil }
            if case .next(let value) = event {
                state.history.record(value)
            } else {
                state.terminal = event
            }
            if state.isDelivering {
                state.pending.append(.event(event))
                return nil
            }
            state.isDelivering = true
            return .event(event, state.subscribers.slots)
        }
        if let work { deliver(work) }
    }

    // MARK: Subscribing

    func subscribe(_ subscriber: any SubscriberProtocol<Value>) -> any Disposable {
        let entry = Entry(subscriber, storage: self)
        let work: Work? = state.withLock { state in
            let terminal = state.terminal
            let replay = state.history.replay(afterError: terminal?.error != nil)
            if state.isDelivering {
                state.pending.append(.subscribe(entry, replay: replay, terminal: terminal))
                return nil
            }
            state.isDelivering = true
            if terminal == nil { state.subscribers.append(entry) }
            return .subscribe(entry, replay: replay, terminal: terminal)
        }
        if let work { deliver(work) }
        return entry
    }

    func remove(_ entry: Entry) {
        state.withLock { state in
            if state.isDelivering {
                state.removals.append(entry)
            } else {
                state.subscribers.remove(entry)
            }
        }
    }

    // MARK: Delivery

    /// Performs `first`, then everything queued meanwhile, then gives up the turn.
    private func deliver(_ first: Work) {
        var next: Work? = first
        while let work = next.take() {
            let endedStream = perform(work)
            _ = consume work  // drop the snapshot before locking, so removals do not copy it
            var released: [Entry] = []
            next = state.withLock { state in
                if endedStream {
                    released.append(contentsOf: state.subscribers.removeAll().lazy.compactMap { $0 })
                }
                for entry in state.removals { state.subscribers.remove(entry) }
                released.append(contentsOf: state.removals)
                state.removals = []
                return state.nextWork()
            }
            _ = released  // subscriptions released here, outside the lock
        }
    }

    /// Runs the user-facing part of `work`; returns whether it delivered the terminal event.
    private func perform(_ work: Work) -> Bool {
        switch work {
        case .event(let event, let snapshot):
            switch event {
            case .next(let value):
                for case let entry? in snapshot where !entry.isDisposed {
                    entry.subscriber.sendNext(value)
                }
                return false
            case .error, .completed:
                for case let entry? in snapshot where !entry.isDisposed {
                    entry.subscriber.send(event)
                    entry.markEnded()
                }
                return true
            }
        case .subscribe(let entry, let replay, let terminal):
            for value in replay {
                if entry.isDisposed { return false }
                entry.subscriber.sendNext(value)
            }
            if let terminal, !entry.isDisposed {
                entry.subscriber.send(terminal)
                entry.markEnded()
            }
            return false
        }
    }
}

extension SubjectStorage.State {
    /// Takes the next queued work, or gives up the delivery turn when there is none.
    mutating func nextWork() -> SubjectStorage.Work? {
        while let pending = pending.popFirst() {
            switch pending {
            case .event(let event):
                return .event(event, subscribers.slots)
            case .subscribe(let entry, let replay, let terminal):
                if entry.isDisposed { continue }
                // Not ended when it subscribed: the terminal event, if sent since, is queued
                // behind this work and will reach the entry.
                if terminal == nil { subscribers.append(entry) }
                return .subscribe(entry, replay: replay, terminal: terminal)
            }
        }
        isDelivering = false
        return nil
    }
}
