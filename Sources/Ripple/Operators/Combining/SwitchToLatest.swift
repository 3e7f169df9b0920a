extension SignalProtocol where Value: SignalProtocol {
    /// Forwards the events of the latest inner signal only (RAC's `switchToLatest`).
    ///
    ///     source:  -a----b----|
    ///     inner a:  1-2-3-4
    ///     inner b:       5-6|
    ///     result:  -1-2-35-6--|
    ///
    /// A new inner signal disposes the previous one. Completes when upstream and the current
    /// inner signal have completed; the first error from either is forwarded.
    public func switchToLatest() -> Signal<Value.Value> {
        flatMapLatest { $0 }
    }
}

extension SignalProtocol {
    /// Maps each value to a signal and forwards only the latest one's events (RxSwift's `flatMapLatest`).
    ///
    ///     query.flatMapLatest { text in search(text) }   // a new query cancels the previous search
    public func flatMapLatest<Inner: SignalProtocol>(_ transform: @escaping (Value) -> Inner) -> Signal<Inner.Value> {
        Signal { downstream in
            // The inner slot joins this subscription before anything runs, then upstream's
            // subscription before its producer runs (`subscribe(linking:)`); each inner
            // subscription takes the slot before its producer runs. Ending this subscription
            // while any of them sends synchronously stops it at once.
            let driver = SwitchDriver<Inner.Value>(downstream)
            downstream.disposable.add(driver.current)
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { driver.switchTo(transform($0)) },
                error: { driver.fail($0) },
                completed: { driver.outerCompleted() })
            return nil
        }
    }
}

/// The state of one `switchToLatest` subscription: which inner signal is current (by
/// generation, so a replaced one's late events are dropped) and whether upstream completed.
final class SwitchDriver<Value>: Sendable {
    /// Guarded by `state`.
    private struct State {
        var generation = 0
        var innerActive = false
        var outerDone = false
        var finished = false
    }

    private let forwarder: SerialForwarder<Value>
    private let state = Lock(State())
    /// The current inner subscription; setting a new one disposes the previous.
    let current = SerialDisposable()

    init(_ downstream: any SubscriberProtocol<Value>) {
        forwarder = SerialForwarder(downstream)
    }

    func switchTo<Inner: SignalProtocol>(_ inner: Inner) where Inner.Value == Value {
        let generation: Int? = state.withLock { state in
            if state.finished { return nil }
            state.generation += 1
            state.innerActive = true
            return state.generation
        }
        guard let generation else { return }
        current.disposable = nil  // dispose the previous inner before subscribing the next
        inner.subscribe(
            linking: { current.disposable = $0 },  // before a `Signal`'s producer runs
            next: { [self] value in
                let isCurrent = state.withLock { state in
                    guard state.generation == generation, !state.finished else { return false }
                    forwarder.enqueue(.next(value))
                    return true
                }
                if isCurrent { forwarder.drain() }
            },
            error: { [self] error in
                let isCurrent = state.withLock { $0.generation == generation }
                if isCurrent { fail(error) }
            },
            completed: { [self] in
                finishIfDone { state in
                    if state.generation == generation { state.innerActive = false }
                }
            })
    }

    func fail(_ error: any Error) {
        state.withLock { $0.finished = true }
        forwarder.send(.error(error))  // dropped if the stream already ended
    }

    func outerCompleted() {
        finishIfDone { $0.outerDone = true }
    }

    private func finishIfDone(_ change: (inout State) -> Void) {
        let done = state.withLock { state in
            change(&state)
            guard !state.finished, state.outerDone, !state.innerActive else { return false }
            state.finished = true
            forwarder.enqueue(.completed)
            return true
        }
        if done { forwarder.drain() }
    }
}
