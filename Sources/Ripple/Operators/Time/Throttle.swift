extension SignalProtocol {
    /// Sends a value at once, then at most one value per `interval`: the latest one that
    /// arrived during the interval, at its end (RxSwift's `throttle(_:latest: true)`).
    ///
    ///     source:   -a-b-c------d---|
    ///     throttle: -a--b--c----d---|     (30 ms)
    ///
    /// Completion sends a value still waiting, then completes; an error drops it and is
    /// forwarded at once. Values are delivered on `scheduler` after the first of each burst.
    /// The same as `throttle(interval, latest: true, on: scheduler)`.
    public func throttle(_ interval: Duration, on scheduler: any Scheduler) -> Signal<Value> where Value: Sendable {
        throttle(interval, latest: true, on: scheduler)
    }

    /// Sends a value at once, then at most one value per `interval`: with `latest`, the latest
    /// one that arrived during the interval, at its end; without, none — the first value of each
    /// window is the only one sent (RxSwift's `throttle(_:latest:scheduler:)`).
    ///
    ///     source:   -a-b-c------d---|
    ///     latest:   -a--b--c----d---|     (30 ms, latest: true)
    ///     first:    -a---c------d---|     (30 ms, latest: false)
    ///
    /// A window opens when a value is sent and lasts `interval`. With `latest: true` a value
    /// waiting at the window's end is sent then and opens the next window; completion sends a
    /// value still waiting, then completes; an error drops it and is forwarded at once. With
    /// `latest: false` values that arrive while a window is open are dropped: nothing ever
    /// waits, and every value is sent at once, on the source's thread; completion and errors
    /// are forwarded at once.
    ///
    ///     button.taps.throttle(.milliseconds(500), latest: false, on: scheduler)   // no double submits
    ///
    /// - Parameters:
    ///   - interval: How long a window lasts after a value is sent.
    ///   - latest: Whether the latest value of a window is sent at its end (`true`) or dropped.
    ///   - scheduler: The clock that times the windows (and, with `latest`, delivers the values
    ///     sent at a window's end).
    /// - Returns: A signal of at most one value per `interval`.
    public func throttle(_ interval: Duration, latest: Bool, on scheduler: any Scheduler) -> Signal<Value> where Value: Sendable {
        Signal { downstream in
            let driver = ThrottleDriver<Value>(interval: interval, latest: latest, scheduler: scheduler, downstream: downstream)
            // The driver's part joins this subscription before anything runs, then the source's
            // subscription before its producer runs (`subscribe(linking:)`): ending this
            // subscription while a synchronous source sends stops it at once.
            downstream.disposable.add(driver.window)
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { driver.next($0) },
                error: { driver.finish(.error($0)) },
                completed: { driver.finish(.completed) })
            return nil
        }
    }
}

/// One `throttle` subscription: whether a window is open and the latest value waiting for its end.
final class ThrottleDriver<Value: Sendable>: Sendable {
    /// Guarded by `state`.
    private struct State: Sendable {
        var isWindowOpen = false
        var waiting: Value?
        var finished = false
    }

    private let interval: Duration
    /// Whether a value arriving during a window waits for its end (`throttle(latest: true)`)
    /// or is dropped.
    private let latest: Bool
    private let scheduler: any Scheduler
    private let forwarder: SerialForwarder<Value>
    private let state = Lock(State())
    /// The timer that closes the current window.
    let window = SerialDisposable()

    init(interval: Duration, latest: Bool, scheduler: any Scheduler, downstream: any SubscriberProtocol<Value>) {
        self.interval = interval
        self.latest = latest
        self.scheduler = scheduler
        forwarder = SerialForwarder(downstream)
    }

    func next(_ value: Value) {
        var replaced: Value?
        defer { _ = replaced }  // released outside the lock: its deinit is user code
        let opened = state.withLock { state in
            if state.finished { return false }
            if state.isWindowOpen {
                // Without `latest` nothing waits: the value is dropped (released with the call).
                if latest {
                    replaced = state.waiting
                    state.waiting = value
                }
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
        var sent: Value?
        state.withLock { state in
            guard !state.finished, let value = state.waiting.take() else {
                state.isWindowOpen = false
                return
            }
            sent = value
            forwarder.enqueue(.next(value))
        }
        guard sent != nil else { return }
        forwarder.drain()
        _ = sent.take()  // released after delivering, outside the lock
        openWindow()
    }

    func finish(_ event: Event<Value>) {
        var flushed: Value?
        let isFirst = state.withLock { state in
            if state.finished { return false }
            state.finished = true
            flushed = forwarder.enqueueEnd(event, flushing: &state.waiting)
            return true
        }
        guard isFirst else { return }
        forwarder.drain()
        // After delivering: nothing runs between the forwarder's enqueue and drain (a scheduler's
        // disposable and a value's deinit are user code). A window ending meanwhile finds `finished`.
        window.dispose()
        _ = flushed
    }
}
