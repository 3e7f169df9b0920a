extension SignalProtocol {
    /// Forwards events for `duration` after subscribing, then completes (RxSwift's
    /// `take(for:scheduler:)`).
    ///
    ///     source: -1-2-3-4-|
    ///     result: -1-2|            (40 ms)
    ///
    /// The timer runs on `scheduler` and its completion is sent from there; values the source
    /// sends at the very moment the timer is due pass if they come before it. Ending first
    /// (the source's completion or error, or a dispose) cancels the timer, and completing
    /// disposes upstream.
    ///
    ///     readings.take(for: .seconds(5), on: scheduler).collect()   // five seconds' worth
    ///
    /// - Parameters:
    ///   - duration: How long to forward values.
    ///   - scheduler: The clock that times `duration` and sends the completion.
    /// - Returns: The source's events during `duration`, then completion.
    public func take(for duration: Duration, on scheduler: any Scheduler) -> Signal<Value> where Value: Sendable {
        Signal { downstream in
            let forwarder = SerialForwarder(downstream)
            // The timer, then the source's subscription, join this one before the source's
            // producer runs (`subscribe(linking:)`): ending it stops a synchronous source at once.
            downstream.disposable.add(scheduler.schedule(after: duration) { forwarder.send(.completed) })
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { forwarder.send(.next($0)) },
                error: { forwarder.send(.error($0)) },
                completed: { forwarder.send(.completed) })
            return nil
        }
    }

    /// Drops the values sent during `duration` after subscribing, then forwards everything
    /// (RxSwift's `skip(_:scheduler:)` for a duration).
    ///
    ///     source: -1-2-3-4-|
    ///     result: -----3-4-|       (40 ms)
    ///
    /// The timer runs on `scheduler`; values the source sends at the very moment the timer is
    /// due are dropped if they come before it. Completion and errors are forwarded whenever they
    /// come. Ending first (completion, error or a dispose) cancels the timer.
    ///
    ///     positions.skip(for: .milliseconds(500), on: scheduler)   // ignore the settling jitter
    ///
    /// - Parameters:
    ///   - duration: How long to drop values.
    ///   - scheduler: The clock that times `duration`.
    /// - Returns: The source's events, less the values of its first `duration`.
    public func skip(for duration: Duration, on scheduler: any Scheduler) -> Signal<Value> {
        Signal { downstream in
            let isOpen = Lock(false)
            // The timer, then the source's subscription, join this one before the source's
            // producer runs (`subscribe(linking:)`): ending it stops a synchronous source at once.
            // The timer only opens the gate: every event comes from the source, in its order.
            downstream.disposable.add(scheduler.schedule(after: duration) { isOpen.withLock { $0 = true } })
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { if isOpen.withLock({ $0 }) { downstream.sendNext($0) } },
                error: { downstream.sendError($0) },
                completed: { downstream.sendCompleted() })
            return nil
        }
    }
}
