

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
public final class Subscriber<Value>: SubscriberProtocol, Disposable, @unchecked Sendable {
    /// The three closures, held together so one reference moves under the lock.
    final class Callbacks {
        let next: ((Value) -> Void)?
        let error: ((any Error) -> Void)?
        let completed: (() -> Void)?

        init(next: ((Value) -> Void)?, error: ((any Error) -> Void)?, completed: (() -> Void)?) {
            self.next = next
            self.error = error
            self.completed = completed
        }
    }

    /// Guarded by `state`. Non-`Sendable` payloads stay inside the mutex.
    struct State: @unchecked Sendable {
        /// nil once a terminal event was delivered or the subscriber was disposed.
        var callbacks: Callbacks?
        /// Set when a terminal event is accepted; later events are ignored.
        var isTerminated = false
        /// Set while one thread runs callbacks; others queue in `pending`.
        var isDelivering = false
        var pending = FIFOQueue<Event<Value>>()
    }

    private let state: Lock<State>

    /// Creates a subscriber; every closure is optional.
    public init(
        next: ((Value) -> Void)? = nil,
        error: ((any Error) -> Void)? = nil,
        completed: (() -> Void)? = nil
    ) {
        state = Lock(State(callbacks: Callbacks(next: next, error: error, completed: completed)))
    }

    /// Whether the subscriber takes no more events: it was disposed or received a terminal event.
    public var isDisposed: Bool {
        state.withLock { $0.isTerminated }
    }

    /// Delivers a value, unless the subscriber is terminated or disposed.
    public func sendNext(_ value: Value) {
        receive(.next(value))
    }

    /// Delivers the error that ends the stream, then releases the closures.
    public func sendError(_ error: any Error) {
        receive(.error(error))
    }

    /// Delivers completion, then releases the closures.
    public func sendCompleted() {
        receive(.completed)
    }

    /// Stops delivery at once, drops queued events and releases the closures.
    ///
    /// Idempotent and thread-safe; called from inside a callback, nothing more is
    /// delivered after that callback returns.
    public func dispose() {
        let released = state.withLock { state in
            state.isTerminated = true
            let callbacks = state.callbacks
            state.callbacks = nil
            return (callbacks, state.pending.removeAll())
        }
        _ = released  // closures and queued values are released here, outside the lock
    }

    private func receive(_ event: Event<Value>) {
        let callbacks: Callbacks? = state.withLock { state in
            guard !state.isTerminated, let callbacks = state.callbacks else { return nil }
            if event.isTerminal { state.isTerminated = true }
            if state.isDelivering {
                state.pending.append(event)
                return nil
            }
            state.isDelivering = true
            if event.isTerminal { state.callbacks = nil }
            return callbacks
        }
        guard let callbacks else { return }
        Self.deliver(event, to: callbacks)
        drain()
    }

    /// Delivers what other threads or re-entrant calls queued while this thread delivered.
    private func drain() {
        while true {
            let work: (Event<Value>, Callbacks)? = state.withLock { state in
                guard let callbacks = state.callbacks, let event = state.pending.popFirst() else {
                    state.isDelivering = false
                    return nil
                }
                if event.isTerminal { state.callbacks = nil }
                return (event, callbacks)
            }
            guard let (event, callbacks) = work else { return }
            Self.deliver(event, to: callbacks)
        }
    }

    private static func deliver(_ event: Event<Value>, to callbacks: Callbacks) {
        switch event {
        case .next(let value): callbacks.next?(value)
        case .error(let error): callbacks.error?(error)
        case .completed: callbacks.completed?()
        }
    }
}
