/// `retry(upTo:backoff:on:)` subscribes the source again from the scheduler's action, on
/// whatever thread that runs, and delivers that attempt's values from there: the signal and its
/// values cross threads, so both must be `Sendable` (as for `subscribe(on:)`).
extension SignalProtocol where Self: Sendable, Value: Sendable {
    /// On error, subscribes again after a delay that grows with each failure, up to `count`
    /// more times; the last error is forwarded (ReactiveSwift's `retry(upTo:interval:on:)`, with
    /// a backoff).
    ///
    ///     source (each attempt): -1#
    ///     retry:                 -1--1---1#     (upTo: 2; waits of 10, then 20 ms)
    ///
    /// The wait before retry k is `backoff.delay(beforeRetry: k)`, timed on `scheduler`; the
    /// retry subscribes from the scheduler's action, on the scheduler's thread, so the signal
    /// and its values are `Sendable`. Values from failed attempts are forwarded as
    /// they came. Disposing the result while it waits cancels the timer: nothing is left
    /// scheduled.
    ///
    /// Where peers differ (some reset the backoff after a value, as Reactor's opt-in
    /// `transientErrors`): here the delay depends only on how many retries the subscription has
    /// made, and a value does not reset it; `count` bounds all the retries of the subscription,
    /// as `retry(_:)` does, so the result always ends. A source that should start afresh after
    /// a success can be retried with `retry(when:)`, or resubscribed by the caller.
    ///
    ///     let feed = connect(to: server).retry(
    ///         upTo: 5,
    ///         backoff: .exponential(initial: .milliseconds(100), multiplier: 2, maximum: .seconds(5), jitter: 0.5),
    ///         on: queue)
    ///
    /// - Parameters:
    ///   - count: How many times to subscribe again; zero or more.
    ///   - backoff: The delay before each retry.
    ///   - scheduler: Times the delays and runs the retries.
    /// - Returns: A signal of every attempt's values, ending as the last attempt ends.
    /// - Precondition: `count` is zero or more.
    public func retry(upTo count: Int, backoff: RetryBackoff, on scheduler: any Scheduler) -> Signal<Value> {
        precondition(count >= 0, "retry(upTo:backoff:on:) needs a count of zero or more, got \(count)")
        return Signal { downstream in
            // The driver joins this subscription before the first attempt runs, and links each
            // attempt into its slot before that attempt's producer runs: ending this subscription
            // while an attempt sends synchronously stops it at once, and cancels a pending timer.
            let driver = BackoffRetryDriver(
                source: self, limit: count, backoff: backoff, scheduler: scheduler, downstream: downstream)
            downstream.disposable.add(driver)
            driver.start()
            return nil
        }
    }
}

/// One `retry(upTo:backoff:on:)` subscription: the locked `BackoffRetryState` (its invariants
/// live there), the live attempt's slot, and the scheduler that times the waits.
///
/// Checked `Sendable`: the scheduler's action reaches the source, the downstream subscriber and
/// the attempts' values from another thread, and each of them is `Sendable` (the operator's
/// constraints).
final class BackoffRetryDriver<Source: SignalProtocol & Sendable>: Disposable, Sendable where Source.Value: Sendable {
    typealias Value = Source.Value

    private let source: Source
    private let backoff: RetryBackoff
    private let scheduler: any Scheduler
    private let downstream: PassthroughSubscriber<Value>
    private let state: Lock<BackoffRetryState>
    /// The live attempt's subscription.
    private let current = SerialDisposable()

    init(source: Source, limit: Int, backoff: RetryBackoff, scheduler: any Scheduler,
         downstream: PassthroughSubscriber<Value>) {
        self.source = source
        self.backoff = backoff
        self.scheduler = scheduler
        self.downstream = downstream
        state = Lock(BackoffRetryState(limit: limit))
    }

    var isDisposed: Bool { state.withLock { $0.phase == .finished } && current.isDisposed }

    func dispose() {
        let timer = state.withLock { $0.dispose() }
        current.dispose()
        timer?.dispose()  // a scheduler's disposable: after unlocking
    }

    /// Runs the first attempt.
    func start() {
        attempt()
    }

    private func failed(_ error: any Error) {
        switch state.withLock({ $0.attemptFailed() }) {
        case .ignore:
            return
        case .forward:
            downstream.sendError(error)
        case .wait(let retry, let generation):
            let delay = backoff.delay(beforeRetry: retry)  // may draw a random number: user code
            // The action may run on another thread: the driver, the source and the values are
            // `Sendable`, and the state machine lets one attempt run at a time.
            let timer = scheduler.schedule(after: delay) { [self] in timerFired(generation) }
            let stale = state.withLock { $0.keep(timer, for: generation) }
            stale?.dispose()
        }
    }

    private func timerFired(_ generation: Int) {
        let (retry, fired) = state.withLock { $0.timerFired(generation) }
        _ = fired  // released after unlocking
        if retry { attempt() }
    }

    /// Starts an attempt, or leaves it to the thread already running the loop.
    private func attempt() {
        guard state.withLock({ $0.requestAttempt() }) else { return }
        while state.withLock({ $0.nextAttempt() }) {
            // The attempt takes the slot (disposing the ended one before it) before its producer
            // runs (`subscribe(linking:)`): disposing the driver stops a synchronous attempt at once.
            source.subscribe(
                linking: { current.disposable = $0 },
                next: { [downstream] in downstream.sendNext($0) },
                error: { [self] in failed($0) },
                completed: { [self] in
                    if state.withLock({ $0.attemptCompleted() }) { downstream.sendCompleted() }
                })
        }
    }
}
