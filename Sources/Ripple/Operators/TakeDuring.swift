extension SignalProtocol {
    /// Forwards events until `lifetime` ends, then completes (ReactiveSwift's `take(during:)`).
    ///
    /// Subscribing after the lifetime ended completes at once without subscribing upstream.
    /// Disposing the result stops observing the lifetime.
    ///
    ///     updates.take(during: screen.lifetime).subscribeNext { print($0) }
    public func take(during lifetime: Lifetime) -> Signal<Value> {
        Signal { subscriber in
            if lifetime.hasEnded {
                subscriber.sendCompleted()
                return nil
            }
            let observation = lifetime.observeEnded { subscriber.sendCompleted() }
            return CompoundDisposable([observation, self.subscribe(subscriber)])
        }
    }
}
