extension SignalProtocol {
    /// Shifts values and completion later by `interval` on `scheduler`; errors pass at once
    /// and drop what is still waiting (RAC's `delay:`).
    ///
    ///     source: -1-2-|
    ///     delay:  ---1-2-|   (20 ms)
    ///
    /// Events keep their order on any scheduler, even `BackgroundScheduler`.
    public func delay(_ interval: Duration, on scheduler: any Scheduler) -> Signal<Value> {
        Signal { downstream in
            let driver = DelayDriver<Value>(downstream)
            let delayed: @Sendable (Event<Value>) -> Void = { event in
                driver.hold(event)
                scheduler.schedule(after: interval) { driver.releaseOldest() }
            }
            let source = self.subscribe(
                next: { delayed(.next($0)) },
                error: { driver.fail($0) },
                completed: { delayed(.completed) })
            return CompoundDisposable([source, driver])
        }
    }
}

/// Holds delayed events in order; each timer that fires releases the oldest one, so timers
/// that fire out of order on a concurrent scheduler cannot reorder events.
final class DelayDriver<Value>: Disposable, @unchecked Sendable {
    /// Guarded by `state`.
    private struct State: @unchecked Sendable {
        var held = FIFOQueue<Event<Value>>()
        var isDisposed = false
    }

    private let forwarder: SerialForwarder<Value>
    private let state = Lock(State())

    init(_ downstream: any SubscriberProtocol<Value>) {
        forwarder = SerialForwarder(downstream)
    }

    var isDisposed: Bool { state.withLock { $0.isDisposed } }

    func dispose() {
        let dropped = state.withLock { state in
            state.isDisposed = true
            return state.held.removeAll()
        }
        _ = dropped
    }

    func hold(_ event: Event<Value>) {
        state.withLock { state in
            if !state.isDisposed { state.held.append(event) }
        }
    }

    func releaseOldest() {
        state.withLock { state in
            if let event = state.held.popFirst() { forwarder.enqueue(event) }
        }
        forwarder.drain()
    }

    func fail(_ error: any Error) {
        let dropped = state.withLock { state in
            forwarder.enqueue(.error(error))
            return state.held.removeAll()
        }
        _ = dropped
        forwarder.drain()
    }
}
