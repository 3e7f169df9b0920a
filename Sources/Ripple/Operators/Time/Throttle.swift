extension SignalProtocol {
    /// Sends a value at once, then at most one value per `interval`: the latest one that
    /// arrived during the interval, at its end (RxSwift's `throttle(_:latest: true)`).
    ///
    ///     source:   -a-b-c------d---|
    ///     throttle: -a--b--c----d---|     (30 ms)
    ///
    /// Completion sends a value still waiting, then completes; an error drops it and is
    /// forwarded at once. Values are delivered on `scheduler` after the first of each burst.
    public func throttle(_ interval: Duration, on scheduler: any Scheduler) -> Signal<Value> {
        Signal { downstream in
            let driver = ThrottleDriver<Value>(interval: interval, scheduler: scheduler, downstream: downstream)
            let source = self.subscribe(
                next: { driver.next($0) },
                error: { driver.finish(.error($0)) },
                completed: { driver.finish(.completed) })
            return CompoundDisposable([source, driver.window])
        }
    }
}

/// One `throttle` subscription: whether a window is open and the latest value waiting for its end.
final class ThrottleDriver<Value>: @unchecked Sendable {
    /// Guarded by `state`.
    private struct State: @unchecked Sendable {
        var isWindowOpen = false
        var waiting: Value?
        var finished = false
    }

    private let interval: Duration
    private let scheduler: any Scheduler
    private let forwarder: SerialForwarder<Value>
    private let state = Lock(State())
    /// The timer that closes the current window.
    let window = SerialDisposable()

    init(interval: Duration, scheduler: any Scheduler, downstream: any SubscriberProtocol<Value>) {
        self.interval = interval
        self.scheduler = scheduler
        forwarder = SerialForwarder(downstream)
    }

    func next(_ value: Value) {
        let opened = state.withLock { state in
            if state.finished { return false }
            if state.isWindowOpen {
                state.waiting = value
                return false
            }
            state.isWindowOpen = true
            forwarder.enqueue(.next(value))
            return true
        }
        if opened {
            forwarder.drain()
            openWindow()
        }
    }

    private func openWindow() {
        window.disposable = scheduler.schedule(after: interval) { [self] in windowEnded() }
    }

    private func windowEnded() {
        let sent = state.withLock { state in
            guard !state.finished, let value = state.waiting.take() else {
                state.isWindowOpen = false
                return false
            }
            forwarder.enqueue(.next(value))
            return true
        }
        if sent {
            forwarder.drain()
            openWindow()
        }
    }

    func finish(_ event: Event<Value>) {
        state.withLock { state in
            if state.finished { return }
            state.finished = true
            forwarder.enqueueEnd(event, flushing: &state.waiting)
        }
        window.dispose()
        forwarder.drain()
    }
}
