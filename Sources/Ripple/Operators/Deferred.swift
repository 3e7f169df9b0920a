extension Signal {
    /// A signal made afresh for each subscription: `make` runs at each subscribe, and its
    /// signal's events are forwarded (RxSwift's `Observable.deferred`, ReactiveSwift's
    /// `SignalProducer { … }` around a factory).
    ///
    ///     make (1st subscribe):  -1-2|
    ///     make (2nd subscribe):  -3|
    ///     deferred, 1st:         -1-2|
    ///     deferred, 2nd:         -3|
    ///
    /// Use it to read state, or start work, at subscription time rather than when the signal
    /// is built. `make` runs on the subscribing thread, during `subscribe`.
    ///
    ///     var attempt = 0
    ///     let fresh = Signal<Int>.deferred {
    ///         attempt += 1
    ///         return Signal.just(attempt)
    ///     }
    ///     fresh.subscribeNext { print($0) }   // 1
    ///     fresh.subscribeNext { print($0) }   // 2
    ///
    /// - Parameter make: Makes the signal for one subscription.
    /// - Returns: A signal that subscribes to what `make` returns, once per subscription.
    public static func deferred<Made: SignalProtocol>(_ make: @escaping () -> Made) -> Signal<Value>
    where Made.Value == Value {
        Signal { downstream in
            // The made signal's subscription joins this one before its producer runs
            // (`subscribe(_:linking:)`): ending this subscription while it sends synchronously
            // stops it at once.
            make().subscribe(downstream, linkingInto: downstream.disposable)
            return nil
        }
    }
}
