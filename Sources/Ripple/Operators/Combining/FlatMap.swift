extension SignalProtocol {
    /// Maps each value to a signal and merges their events (RAC's `flattenMap:`).
    ///
    ///     source: -a-----b-------|
    ///     inner a:  1---2|
    ///     inner b:        3-4|
    ///     result: --1---2-3-4----|
    ///
    /// Inner signals are subscribed as their values arrive and may run at once; the result
    /// completes when upstream and every inner signal have completed. The first error from
    /// any of them is forwarded and disposes the rest. Inner signals that complete at once
    /// run in constant stack, however many there are.
    public func flatMap<Inner: SignalProtocol>(_ transform: @escaping (Value) -> Inner) -> Signal<Inner.Value> {
        Signal { downstream in
            // The driver's compound joins this subscription before anything runs; upstream's
            // subscription joins it before its producer runs (`subscribe(linking:)`), as each
            // inner subscription joins its slot there. Ending this subscription while any of them
            // sends synchronously stops it at once.
            let merge = MergeDriver<Inner.Value>(downstream)
            downstream.disposable.add(merge.inners)
            self.subscribe(
                linking: { merge.inners.add($0) },
                next: { merge.add(transform($0)) },
                error: { merge.fail($0) },
                completed: { merge.outerCompleted() })
            return nil
        }
    }

    /// Merges the events of `self` and `other` (RAC's `merge:`); completes when both have.
    ///
    ///     a:      -1---3-|
    ///     b:      ---2---4-|
    ///     merge:  -1-2-3-4-|
    public func merge<Other: SignalProtocol>(_ other: Other) -> Signal<Value> where Other.Value == Value {
        Signal<Value>.merge([self, other])
    }
}

extension Signal {
    /// Merges the events of every signal in `signals`; completes when all have.
    ///
    ///     Signal.merge([a, b, c])
    public static func merge(_ signals: [any SignalProtocol<Value>]) -> Signal<Value> {
        Signal<any SignalProtocol<Value>>.from(signals).flatMap { $0.asSignal() }
    }
}

extension SignalProtocol where Value: SignalProtocol {
    /// Merges the events of the inner signals this signal sends (RAC's `flatten`).
    public func flatten() -> Signal<Value.Value> {
        flatMap { $0 }
    }
}

/// The state of one `flatMap` subscription: how many inner signals are live, whether
/// upstream completed, and the disposables of all of them.
final class MergeDriver<Value>: Sendable {
    /// Guarded by `state`.
    private struct State {
        var activeInners = 0
        var outerDone = false
        var finished = false
    }

    private let forwarder: SerialForwarder<Value>
    private let state = Lock(State())
    /// Upstream's and every live inner's subscription.
    let inners = CompoundDisposable()

    init(_ downstream: any SubscriberProtocol<Value>) {
        forwarder = SerialForwarder(downstream)
    }

    func add<Inner: SignalProtocol>(_ inner: Inner) where Inner.Value == Value {
        let admitted = state.withLock { state in
            if state.finished { return false }
            state.activeInners += 1
            return true
        }
        guard admitted else { return }
        // The slot is in `inners` before the inner subscription, which it holds before the inner
        // producer runs (`subscribe(linking:)`); the slot leaves `inners` when the inner completes.
        let slot = SerialDisposable()
        inners.add(slot)
        inner.subscribe(
            linking: { slot.disposable = $0 },
            next: { [forwarder] in forwarder.send(.next($0)) },
            error: { [self] in fail($0) },
            completed: { [self] in
                inners.remove(slot)
                innerCompleted()
            })
    }

    func fail(_ error: any Error) {
        state.withLock { $0.finished = true }
        forwarder.send(.error(error))  // dropped if the stream already ended
    }

    func outerCompleted() {
        finishIfDone { $0.outerDone = true }
    }

    private func innerCompleted() {
        finishIfDone { $0.activeInners -= 1 }
    }

    private func finishIfDone(_ change: (inout State) -> Void) {
        let done = state.withLock { state in
            change(&state)
            guard !state.finished, state.outerDone, state.activeInners == 0 else { return false }
            state.finished = true
            forwarder.enqueue(.completed)
            return true
        }
        if done { forwarder.drain() }
    }
}
