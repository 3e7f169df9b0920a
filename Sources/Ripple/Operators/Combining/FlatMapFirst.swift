extension SignalProtocol {
    /// Maps a value to a signal and forwards its events, ignoring the values that arrive while
    /// it runs (RxSwift's `flatMapFirst`, ReactiveSwift's `flatten(.throttle)`; "exhaustMap").
    ///
    ///     source:  1-2--(3|)
    ///     inner:   -a-b|          (each run)
    ///     result:  -a-b--a-b|     (2 arrives during 1's run: ignored)
    ///
    /// `transform` runs only for the values that start an inner signal. The result completes
    /// when upstream and the running inner signal (if any) have completed; the first error from
    /// either is forwarded and disposes the other.
    ///
    ///     let saves = saveTaps.flatMapFirst { _ in save(document) }   // taps during a save are ignored
    ///
    /// - Parameter transform: Makes the inner signal for a value that arrives while none runs.
    /// - Returns: A signal of the inner signals' values.
    public func flatMapFirst<Inner: SignalProtocol>(_ transform: @escaping (Value) -> Inner) -> Signal<Inner.Value> {
        Signal { downstream in
            // The inner slot joins this subscription before anything runs, then upstream's
            // subscription before its producer runs (`subscribe(linking:)`); each inner
            // subscription takes the slot before its producer runs. Ending this subscription
            // while any of them sends synchronously stops it at once.
            let driver = FlatMapFirstDriver<Inner.Value>(downstream)
            downstream.disposable.add(driver.current)
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { value in
                    guard driver.admit() else { return }
                    driver.run(transform(value).asSignal())
                },
                error: { driver.fail($0) },
                completed: { driver.outerCompleted() })
            return nil
        }
    }
}

/// What one `flatMapFirst` subscription decides under its lock, as a pure state machine.
///
/// Invariants: at most one inner signal runs (`admit()` lets a value through only when none
/// does); completion is decided once, when upstream completed and no inner signal runs; once
/// `isFinished`, nothing is admitted.
struct FlatMapFirstState: Sendable {
    /// An inner signal is subscribed (or about to be) and has not completed.
    private(set) var innerRunning = false
    private(set) var outerDone = false
    /// The stream ended: completed or failed.
    private(set) var isFinished = false

    /// A value arrived: true if it starts an inner signal, false if it is ignored.
    mutating func admit() -> Bool {
        if isFinished || innerRunning { return false }
        innerRunning = true
        return true
    }

    /// The running inner signal completed: true if the result completes now.
    mutating func innerCompleted() -> Bool {
        innerRunning = false
        return finishIfDone()
    }

    /// Upstream completed: true if the result completes now.
    mutating func outerCompleted() -> Bool {
        outerDone = true
        return finishIfDone()
    }

    /// An error: true if it is the first terminal event (forward it).
    mutating func fail() -> Bool {
        if isFinished { return false }
        isFinished = true
        return true
    }

    private mutating func finishIfDone() -> Bool {
        guard !isFinished, outerDone, !innerRunning else { return false }
        isFinished = true
        return true
    }
}

/// One `flatMapFirst` subscription: the locked `FlatMapFirstState` and the running inner
/// signal's subscription.
final class FlatMapFirstDriver<Value>: Sendable {
    private let forwarder: SerialForwarder<Value>
    private let state = Lock(FlatMapFirstState())
    /// The running inner signal's subscription.
    let current = SerialDisposable()

    init(_ downstream: any SubscriberProtocol<Value>) {
        forwarder = SerialForwarder(downstream)
    }

    func admit() -> Bool {
        state.withLock { $0.admit() }
    }

    /// Subscribes the admitted inner signal; it takes the slot before its producer runs.
    func run(_ inner: Signal<Value>) {
        inner.subscribe(
            linking: { current.disposable = $0 },
            next: { [forwarder] in forwarder.send(.next($0)) },
            error: { [self] in fail($0) },
            completed: { [self] in complete { $0.innerCompleted() } })
    }

    func outerCompleted() {
        complete { $0.outerCompleted() }
    }

    func fail(_ error: any Error) {
        if state.withLock({ $0.fail() }) { forwarder.send(.error(error)) }
    }

    private func complete(_ change: (inout FlatMapFirstState) -> Bool) {
        let done = state.withLock { state in
            let done = change(&state)
            if done { forwarder.enqueue(.completed) }
            return done
        }
        if done { forwarder.drain() }
    }
}
