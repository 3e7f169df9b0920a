extension SignalProtocol {
    /// Subscribes to `self` on `scheduler`: the subscribe closure (and whatever it sends
    /// synchronously) runs there (RAC's `subscribeOn:`).
    ///
    /// Disposing before the scheduled subscription starts means `self` is never subscribed;
    /// disposing later disposes the upstream subscription.
    ///
    ///     work.subscribe(on: BackgroundScheduler()).subscribeNext { print($0) }
    public func subscribe(on scheduler: any Scheduler) -> Signal<Value> {
        Signal { subscriber in
            let upstream = SerialDisposable()
            let scheduled = scheduler.schedule {
                upstream.disposable = self.subscribe(subscriber)
            }
            return CompoundDisposable([scheduled, upstream])
        }
    }

    /// Delivers every event on `scheduler`, in order (RAC's `deliverOn:`).
    ///
    /// Events of one subscription are queued and drained by one scheduled action at a time,
    /// so they keep their order and never overlap even on `BackgroundScheduler`. Disposing
    /// drops what is still queued.
    ///
    ///     source:   -a-b-|
    ///     deliver:  -a-b-|   (each on `scheduler`)
    @inlinable
    public func deliver(on scheduler: any Scheduler) -> Signal<Value> {
        Signal { downstream in
            let relay = DeliveryRelay(to: downstream, on: scheduler)
            let upstream = self.subscribe(
                next: { relay.enqueue(.next($0)) },
                error: { relay.enqueue(.error($0)) },
                completed: { relay.enqueue(.completed) })
            return CompoundDisposable([relay, upstream])
        }
    }
}

/// Queues one subscription's events and drains them on a scheduler, a batch at a time.
///
/// One drain is scheduled when the queue goes from empty to non-empty; it takes everything
/// queued in one lock acquisition, delivers it in order, and repeats until the queue is dry.
@usableFromInline
final class DeliveryRelay<Value>: Disposable, @unchecked Sendable {
    /// Guarded by `state`.
    @usableFromInline
    struct State: @unchecked Sendable {
        @usableFromInline var queue = FIFOQueue<Event<Value>>()
        /// Set while a drain is scheduled or running; cleared when the queue runs dry.
        @usableFromInline var isScheduled = false
        @usableFromInline var isDisposed = false
        @inlinable init() {}
    }

    @usableFromInline let downstream: PassthroughSubscriber<Value>
    @usableFromInline let scheduler: any Scheduler
    @usableFromInline let state = Lock(State())

    @inlinable
    init(to downstream: PassthroughSubscriber<Value>, on scheduler: any Scheduler) {
        self.downstream = downstream
        self.scheduler = scheduler
    }

    @usableFromInline var isDisposed: Bool { state.withLock { $0.isDisposed } }

    @usableFromInline
    func dispose() {
        let dropped = state.withLock { state in
            state.isDisposed = true
            return state.queue.removeAll()
        }
        _ = dropped
    }

    @inlinable
    func enqueue(_ event: Event<Value>) {
        let mustSchedule = state.withLock { state in
            if state.isDisposed { return false }
            state.queue.append(event)
            if state.isScheduled { return false }
            state.isScheduled = true
            return true
        }
        if mustSchedule {
            scheduler.schedule { [self] in drain() }
        }
    }

    @inlinable
    func drain() {
        while true {
            let batch: ContiguousArray<Event<Value>?>? = state.withLock { state in
                if !state.isDisposed, !state.queue.isEmpty { return state.queue.removeAll() }
                state.isScheduled = false
                return nil
            }
            guard let batch else { return }
            for case let event? in batch {
                if downstream.isDisposed { break }
                downstream.send(event)
            }
        }
    }
}
