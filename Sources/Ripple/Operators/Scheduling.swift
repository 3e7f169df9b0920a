import Synchronization

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
    public func deliver(on scheduler: any Scheduler) -> Signal<Value> {
        Signal { subscriber in
            let relay = DeliveryRelay(to: subscriber, on: scheduler)
            return CompoundDisposable([relay, self.subscribe(relay)])
        }
    }
}

/// Queues one subscription's events and drains them on a scheduler, one batch at a time.
final class DeliveryRelay<Value>: SubscriberProtocol, Disposable, @unchecked Sendable {
    /// Guarded by `state`.
    private struct State: @unchecked Sendable {
        var queue = FIFOQueue<Event<Value>>()
        /// Set while a drain is scheduled or running; cleared when the queue runs dry.
        var isScheduled = false
        var isDisposed = false
    }

    private let downstream: any SubscriberProtocol<Value>
    private let scheduler: any Scheduler
    private let state = Lock(State())

    init(to downstream: any SubscriberProtocol<Value>, on scheduler: any Scheduler) {
        self.downstream = downstream
        self.scheduler = scheduler
    }

    var isDisposed: Bool { state.withLock { $0.isDisposed } }

    func dispose() {
        let dropped = state.withLock { state in
            state.isDisposed = true
            return state.queue.removeAll()
        }
        _ = dropped
    }

    func sendNext(_ value: Value) { enqueue(.next(value)) }
    func sendError(_ error: any Error) { enqueue(.error(error)) }
    func sendCompleted() { enqueue(.completed) }

    private func enqueue(_ event: Event<Value>) {
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

    private func drain() {
        while true {
            let event: Event<Value>? = state.withLock { state in
                if !state.isDisposed, let event = state.queue.popFirst() { return event }
                state.isScheduled = false
                return nil
            }
            guard let event else { return }
            downstream.send(event)
        }
    }
}
