extension SignalProtocol {
    /// Pairs each value of `self` with the latest value of `other` (ReactiveSwift's
    /// `withLatest(from:)`, RxSwift's `withLatestFrom`).
    ///
    ///     source: -1---2-3---4|
    ///     other:  ---a----b|
    ///     result: -----x-y---z|    (x = (2,a), y = (3,a), z = (4,b))
    ///
    /// Values of `self` sent before `other` has sent one are dropped. Only `self` drives the
    /// result: it completes when `self` completes, and `other` completing only stops its latest
    /// value from changing (the last one keeps being paired). An error from either is forwarded.
    /// `other` is subscribed first, so a value it sends during its subscription (a
    /// `BehaviorSubject`, `Signal.just`) is there for the first value of `self`.
    ///
    ///     taps.withLatest(from: selection).subscribeNext { tap, item in open(item, at: tap) }
    ///
    /// - Parameter other: The signal whose latest value accompanies each value of `self`.
    /// - Returns: A signal of `(value, latest value of other)` pairs.
    public func withLatest<Other: SignalProtocol>(from other: Other) -> Signal<(Value, Other.Value)> {
        Signal { downstream in
            let forwarder = SerialForwarder(downstream)
            // `Lock` needs a Sendable state and `Other.Value` need not be Sendable (as for
            // `combineLatest` and `sample`): the box vouches for it, as `UncheckedSendable` says.
            // The value is read and written only under the lock, and leaves it only as a copy
            // enqueued there, delivered through the forwarder's serialized turn.
            let latest = Lock(UncheckedSendable<Other.Value?>(nil))
            // Each subscription joins this one before its producer runs (`subscribe(linking:)`):
            // ending it while either sends synchronously stops that one at once.
            other.subscribe(
                linkingInto: downstream.disposable,
                next: { value in
                    let replaced = latest.withLock { latest in
                        defer { latest.value = value }
                        return latest.value
                    }
                    _ = replaced  // released outside the lock: its deinit is user code
                },
                error: { forwarder.send(.error($0)) },
                completed: nil)
            if downstream.isDisposed { return nil }
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { value in
                    latest.withLock { if let other = $0.value { forwarder.enqueue(.next((value, other))) } }
                    forwarder.drain()
                },
                error: { forwarder.send(.error($0)) },
                completed: { forwarder.send(.completed) })
            return nil
        }
    }
}
