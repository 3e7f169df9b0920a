extension SignalProtocol {
    /// Sends a value only once `interval` has passed without a newer one (RAC's `throttle:`,
    /// RxSwift's `debounce`).
    ///
    /// Each value restarts the wait and replaces the one waiting. Completion sends the value
    /// still waiting, then completes; an error drops it and is forwarded at once.
    ///
    ///     source:   -a-b----c------|
    ///     debounce: ------b----c---|    (30 ms)
    ///
    /// - Parameters:
    ///   - interval: The quiet time a value must survive.
    ///   - scheduler: The clock that times the wait and delivers the value.
    public func debounce(_ interval: Duration, on scheduler: any Scheduler) -> Signal<Value> where Value: Sendable {
        Signal { downstream in
            let driver = DebounceDriver<Value>(interval: interval, scheduler: scheduler, downstream: downstream)
            // The driver's part joins this subscription before anything runs, then the source's
            // subscription before its producer runs (`subscribe(linking:)`): ending this
            // subscription while a synchronous source sends stops it at once.
            downstream.disposable.add(driver.timer)
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { driver.next($0) },
                error: { driver.finish(.error($0)) },
                completed: { driver.finish(.completed) })
            return nil
        }
    }
}

/// One `debounce` subscription: the value waiting and the generation of its timer, so a
/// timer overtaken by a newer value sends nothing.
final class DebounceDriver<Value>: @unchecked Sendable {  // state behind its lock; only debounce(_:on:) makes one, and it requires Sendable values
    /// Guarded by `state`.
    private struct State: @unchecked Sendable {  // holds Sendable values (see debounce's constraint) and the subscriber, only under the lock
        var waiting: Value?
        var generation = 0
        var finished = false
    }

    private let interval: Duration
    private let scheduler: any Scheduler
    private let forwarder: SerialForwarder<Value>
    private let state = Lock(State())
    /// The timer of the value waiting; a newer value replaces (and cancels) it.
    let timer = SerialDisposable()

    init(interval: Duration, scheduler: any Scheduler, downstream: any SubscriberProtocol<Value>) {
        self.interval = interval
        self.scheduler = scheduler
        forwarder = SerialForwarder(downstream)
    }

    func next(_ value: Value) {
        var replaced: Value?
        let generation: Int? = state.withLock { state in
            if state.finished { return nil }
            replaced = state.waiting
            state.waiting = value
            state.generation += 1
            return state.generation
        }
        if let generation {
            timer.disposable = scheduler.schedule(after: interval) { [self] in fire(generation) }
        }
        _ = replaced  // released here, outside the lock: its deinit is user code
    }

    private func fire(_ generation: Int) {
        var sent: Value?
        state.withLock { state in
            guard !state.finished, state.generation == generation else { return }
            sent = state.waiting.take()
            if let sent { forwarder.enqueue(.next(sent)) }
        }
        forwarder.drain()
        _ = sent  // released after delivering, outside the lock
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
        // disposable and a value's deinit are user code). A timer firing meanwhile finds `finished`.
        timer.dispose()
        _ = flushed
    }
}
