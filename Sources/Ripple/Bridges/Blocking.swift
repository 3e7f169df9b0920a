import Dispatch

extension SignalProtocol {
    /// Blocks the calling thread until the signal completes (RAC's `waitUntilCompleted:`).
    ///
    /// Throws the signal's error, or `TimeoutError` when `timeout` passes first (the
    /// subscription is then disposed). Works on any thread, without a run loop; the signal
    /// must not need the blocked thread to make progress.
    ///
    ///     try upload.waitUntilCompleted(timeout: .seconds(5))
    public func waitUntilCompleted(timeout: Duration) throws {
        let outcome = blockingOutcome(timeout: timeout, stopAtFirstValue: false)
        switch outcome {
        case .error(let error): throw error
        case .next, .completed: return
        case nil: throw TimeoutError(interval: timeout)
        }
    }

    /// Blocks until the first value and returns it (RAC's `first`); nil if the signal ends
    /// without a value, fails, or `timeout` passes first. The subscription is then disposed.
    ///
    /// It subscribes through `take(1)`, so a synchronous source stops right after its first
    /// value instead of running to its end before `first` looks at what arrived.
    ///
    ///     let config = configSignal.first(timeout: .seconds(1))
    public func first(timeout: Duration) -> Value? {
        take(1).blockingOutcome(timeout: timeout, stopAtFirstValue: true)?.value
    }

    /// Subscribes, waits for the first decisive event (or the timeout, giving nil), disposes.
    private func blockingOutcome(timeout: Duration, stopAtFirstValue: Bool) -> Event<Value>? {
        let done = DispatchSemaphore(value: 0)
        let outcome = Lock(UncheckedSendable<Event<Value>?>(nil))
        let record: (Event<Value>) -> Void = { event in
            let isFirst = outcome.withLock { state in
                if state.value != nil { return false }
                state.value = event
                return true
            }
            if isFirst { done.signal() }
        }
        let subscription = subscribe(
            next: { if stopAtFirstValue { record(.next($0)) } },
            error: { record(.error($0)) },
            completed: { record(.completed) })
        _ = done.wait(timeout: .now() + .nanoseconds(timeout.clampedNanoseconds))
        subscription.dispose()
        return outcome.withLock { $0.value }
    }
}
