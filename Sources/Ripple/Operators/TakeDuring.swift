extension SignalProtocol {
    /// Forwards events until `lifetime` ends, then completes (ReactiveSwift's `take(during:)`).
    ///
    /// Subscribing after the lifetime ended completes at once without subscribing upstream.
    /// Disposing the result stops observing the lifetime. The lifetime ending while a
    /// synchronous upstream still sends from inside its subscribe stops it within an element.
    ///
    ///     updates.take(during: screen.lifetime).subscribeNext { print($0) }
    public func take(during lifetime: Lifetime) -> Signal<Value> {
        Signal { subscriber in
            if lifetime.hasEnded {
                subscriber.sendCompleted()
                return nil
            }
            // The observation, then the upstream subscription, join this subscription before the
            // upstream's producer runs (`subscribe(_:linking:)`): the completion the lifetime's
            // end sends disposes both, and a synchronous upstream stops at once.
            subscriber.disposable.add(lifetime.observeEnded { subscriber.sendCompleted() })
            self.subscribe(subscriber, linkingInto: subscriber.disposable)
            return nil
        }
    }
}
