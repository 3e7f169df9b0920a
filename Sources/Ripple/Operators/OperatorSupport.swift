/// Building blocks shared by the operators: how an operator subscribes upstream on behalf
/// of its downstream subscriber.
extension SignalProtocol {
    /// Builds an operator: for each subscription, `makeUpstream` receives the downstream
    /// subscriber and returns the `Subscriber` that handles upstream's events.
    ///
    /// The returned `Subscriber` serializes upstream events, so the closures it holds may
    /// keep per-subscription state in captured variables without a lock. Disposing the
    /// result disposes the upstream subscription.
    @inlinable
    func lift<U>(_ makeUpstream: @escaping (PassthroughSubscriber<U>) -> Subscriber<Value>) -> Signal<U> {
        Signal { downstream in self.subscribe(makeUpstream(downstream)) }
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
            relayDepth: downstream.relayDepth &+ 1,
            next: next,
            error: error ?? { downstream.sendError($0) },
            completed: completed ?? { downstream.sendCompleted() })
    }
}

/// Forwards events to one downstream subscriber in the order they were enqueued, one at a
/// time, from whichever thread drains.
///
/// Multi-source and timed operators decide what to send under their own lock and
/// `enqueue` there (it never runs user code), then call `drain()` after unlocking; so the
/// decision order is the delivery order and no lock is held while user code runs.
final class SerialForwarder<Value>: @unchecked Sendable {
    /// Guarded by `state`.
    private struct State: @unchecked Sendable {
        var queue = FIFOQueue<Event<Value>>()
        var isDraining = false
        var isTerminated = false
    }

    private let downstream: any SubscriberProtocol<Value>
    private let state = Lock(State())

    init(_ downstream: any SubscriberProtocol<Value>) {
        self.downstream = downstream
    }

    /// Queues `event` (events after a terminal one are dropped). Safe to call under a lock.
    func enqueue(_ event: Event<Value>) {
        state.withLock { state in
            if state.isTerminated { return }
            if event.isTerminal { state.isTerminated = true }
            state.queue.append(event)
        }
    }

    /// Delivers everything queued, unless another thread is already doing so.
    func drain() {
        let mine = state.withLock { state in
            if state.isDraining || state.queue.isEmpty { return false }
            state.isDraining = true
            return true
        }
        guard mine else { return }
        while true {
            let event: Event<Value>? = state.withLock { state in
                if let event = state.queue.popFirst() { return event }
                state.isDraining = false
                return nil
            }
            guard let event else { return }
            downstream.send(event)
        }
    }

    /// Queues and delivers `event`.
    func send(_ event: Event<Value>) {
        enqueue(event)
        drain()
    }

    /// Queues the end of a timed operator's stream: completion first sends the value it was
    /// holding back; an error drops it. Safe to call under the operator's lock.
    func enqueueEnd(_ event: Event<Value>, flushing waiting: inout Value?) {
        if case .completed = event, let value = waiting.take() { enqueue(.next(value)) }
        waiting = nil
        enqueue(event)
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
    /// Subscribes every source in order, tagging its events with its index; stops early if
    /// `downstream` ended meanwhile. Returns the subscriptions.
    func subscribe<U>(to sources: [any SignalProtocol<Value>], for downstream: PassthroughSubscriber<U>) -> CompoundDisposable {
        let subscriptions = CompoundDisposable()
        for (index, source) in sources.enumerated() {
            if downstream.isDisposed { break }
            subscriptions.add(source.subscribe(
                next: { self.next($0, at: index) },
                error: { self.fail($0) },
                completed: { self.completed(at: index) }))
        }
        return subscriptions
    }
}
