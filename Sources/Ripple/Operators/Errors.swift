/// The error `timeout(_:on:)` fails with.
public struct TimeoutError: Error, CustomStringConvertible, Sendable {
    /// The interval that passed without the signal completing.
    public let interval: Duration

    /// The error of a timeout after `interval`: what a test expects from `timeout(_:on:)`.
    ///
    ///     let expected = TimeoutError(interval: .milliseconds(50))
    ///     print(expected)   // timed out after 0.05 seconds
    ///
    /// - Parameter interval: The interval that passed without the signal completing.
    public init(interval: Duration) { self.interval = interval }

    /// A readable account of the timeout, such as "timed out after 0.5 seconds".
    ///
    ///     Signal<Int>.never.timeout(.milliseconds(500), on: clock)
    ///         .subscribe(error: { print($0) })   // timed out after 0.5 seconds
    public var description: String { "timed out after \(interval)" }
}

extension SignalProtocol {
    /// On error, switches to the signal `handler` returns for it (RAC's `catch:`).
    ///
    ///     source: -1-2-#
    ///     catch:  -1-2-9|   ({ _ in Signal.just(9) })
    ///
    /// Values and completion pass through; the replacement's events follow the error's place.
    public func `catch`<Other: SignalProtocol>(_ handler: @escaping (any Error) -> Other) -> Signal<Value>
    where Other.Value == Value {
        Signal { downstream in
            // The source's subscription, and later the replacement's (at most one per
            // subscription), join this one before their producers run (`subscribe(linking:)`):
            // ending it while either sends synchronously stops that one at once.
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { downstream.sendNext($0) },
                error: { handler($0).subscribe(downstream, linkingInto: downstream.disposable) },
                completed: { downstream.sendCompleted() })
            return nil
        }
    }

    /// On error, switches to `replacement` (RAC's `catchTo:`).
    ///
    ///     source.catchTo(Signal.just(fallback))
    public func catchTo<Other: SignalProtocol>(_ replacement: Other) -> Signal<Value> where Other.Value == Value {
        self.catch { _ in replacement }
    }

    /// On error, subscribes again, up to `count` more times; the last error is forwarded (RAC's `retry:`).
    ///
    ///     source (1st):  -1-#
    ///     source (2nd):  -1-2|
    ///     retry(1):      -1--1-2|
    ///
    /// Values from failed attempts are forwarded as they came. Retries of a signal that fails
    /// at once run in a loop, not recursively.
    public func retry(_ count: Int) -> Signal<Value> {
        precondition(count >= 0, "retry(_:) needs a count of zero or more, got \(count)")
        return Signal { downstream in
            // The driver joins this subscription before the first attempt runs, and links each
            // attempt into its slot (`RetryDriver.current`) before that attempt's producer runs:
            // ending this subscription while an attempt sends synchronously stops it at once.
            let driver = RetryDriver(source: self, retries: count, downstream: downstream)
            downstream.disposable.add(driver)
            driver.start()
            return nil
        }
    }

    /// On error, subscribes again, with no limit (RxSwift's `retry()`, ReactiveSwift's
    /// `retry(upTo: .max)`): only completion, or disposing the result, ends it.
    ///
    ///     source (1st):  -1-#
    ///     source (2nd):  -1-#
    ///     source (3rd):  -1-2|
    ///     retry():       -1--1--1-2|
    ///
    /// Values from failed attempts are forwarded as they came. Retries run in a loop, not
    /// recursively: a source that fails at once, forever, is an endless loop of the caller's
    /// making, but in constant stack, and disposing the result from another thread (or a
    /// callback) stops it within an attempt. To wait between attempts, use
    /// `retry(upTo:backoff:on:)` or `retry(when:)`.
    ///
    ///     let feed = connect(to: server).retry()   // reconnects after every failure
    ///
    /// - Returns: A signal that never fails: it completes when an attempt completes.
    public func retry() -> Signal<Value> {
        Signal { downstream in
            // As `retry(_:)`: the driver joins this subscription before the first attempt, and
            // links each attempt into its slot before that attempt's producer runs.
            let driver = RetryDriver(source: self, retries: nil, downstream: downstream)
            downstream.disposable.add(driver)
            driver.start()
            return nil
        }
    }

    /// Fails with `TimeoutError` unless the signal ends within `interval` of subscribing
    /// (RAC's `timeout:onScheduler:`).
    ///
    ///     source:  -1-2-----3|
    ///     timeout: -1-2-#        (50 ms)
    ///
    /// The timer runs on `scheduler`; ending first cancels it, and timing out disposes upstream.
    public func timeout(_ interval: Duration, on scheduler: any Scheduler) -> Signal<Value> where Value: Sendable {
        Signal { downstream in
            let forwarder = SerialForwarder(downstream)
            // The timer, then the source's subscription, join this one before the source's
            // producer runs (`subscribe(linking:)`): ending it stops a synchronous source at once.
            downstream.disposable.add(scheduler.schedule(after: interval) {
                forwarder.send(.error(TimeoutError(interval: interval)))
            })
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { forwarder.send(.next($0)) },
                error: { forwarder.send(.error($0)) },
                completed: { forwarder.send(.completed) })
            return nil
        }
    }
}

/// Resubscribes a failing source in a loop: an attempt that fails during its own subscribe
/// call only flags the loop to go round again.
final class RetryDriver<Source: SignalProtocol>: Disposable, @unchecked Sendable {  // state behind its lock; resubscribes on the thread that delivers the error, reached elsewhere only through Sendable signals
    typealias Value = Source.Value

    /// Guarded by `state`.
    private struct State {
        /// nil: no limit (`retry()`).
        var retriesLeft: Int?
        var isLooping = false
        var mustRetry = false
        var isDisposed = false
    }

    private let source: Source
    private let downstream: any SubscriberProtocol<Value>
    private let state: Lock<State>
    private let current = SerialDisposable()

    init(source: Source, retries: Int?, downstream: any SubscriberProtocol<Value>) {
        self.source = source
        self.downstream = downstream
        state = Lock(State(retriesLeft: retries))
    }

    var isDisposed: Bool { state.withLock { $0.isDisposed } }

    func dispose() {
        state.withLock { $0.isDisposed = true }
        current.dispose()
    }

    /// Runs the first attempt (and the retries of those that fail during their own subscribe).
    func start() {
        state.withLock { $0.mustRetry = true }
        loop()
    }

    private func failed(_ error: any Error) {
        let retry = state.withLock { state in
            if state.isDisposed || state.retriesLeft == 0 { return false }
            if let left = state.retriesLeft { state.retriesLeft = left - 1 }
            state.mustRetry = true
            return true
        }
        if retry { loop() } else { downstream.sendError(error) }
    }

    private func loop() {
        let mine = state.withLock { state in
            if state.isLooping { return false }
            state.isLooping = true
            return true
        }
        guard mine else { return }
        while true {
            let attempt = state.withLock { state in
                defer { state.mustRetry = false }
                if !state.mustRetry || state.isDisposed { state.isLooping = false; return false }
                return true
            }
            guard attempt else { return }
            // The attempt takes the slot (disposing the ended one before it) before its producer
            // runs (`subscribe(linking:)`): disposing the driver stops a synchronous attempt at once,
            // and 100,000 attempts leave one subscription behind, not 100,000.
            source.subscribe(
                linking: { current.disposable = $0 },
                next: { [downstream] in downstream.sendNext($0) },
                error: { [self] in failed($0) },
                completed: { [downstream] in downstream.sendCompleted() })
        }
    }
}
