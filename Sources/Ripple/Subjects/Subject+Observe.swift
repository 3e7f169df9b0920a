/// Uber Signals' observers: weak owners, one-shot observers and per-observer schedulers.
///
/// Available on every signal and subject. Each returns a `Disposable` that ends the
/// observation; it can be ignored, since these observers end themselves.
extension SignalProtocol {
    /// Observes values on behalf of `owner`, held weakly and handed back with its own type
    /// (delegate replacement without retain cycles).
    ///
    /// Nothing is delivered once `owner` is freed. The observation, its closure and whatever
    /// that captured are then released: on a subject (`Subject`, `BehaviorSubject`,
    /// `ReplaySubject`) at the next value sent or the next subscribe to that subject, whichever
    /// comes first; on any other signal at the next value. Disposing it releases them at once.
    ///
    ///     downloader.progress.observe(owner: self) { screen, progress in
    ///         screen.show(progress)            // `screen` is `self`, never retained
    ///     }
    @discardableResult
    public func observe<Owner: AnyObject>(
        owner: Owner,
        _ callback: @escaping (Owner, Value) -> Void
    ) -> any Disposable {
        let subscription = SerialDisposable()
        subscription.disposable = subscribeNext { [weak owner] value in
            guard let owner else {
                subscription.dispose()
                return
            }
            callback(owner, value)
        }
        (self as? ObservationHost)?.ownedObservations.add(owner: owner, subscription)
        return subscription
    }

    /// Observes values on behalf of a weakly held `owner`, delivered on `scheduler`.
    ///
    /// Events keep their order on any scheduler; the owner is checked when each value is
    /// delivered, so none arrives after it is freed. A dead owner's observation is released
    /// as `observe(owner:_:)` says.
    ///
    ///     model.changes.observe(owner: self, on: SerialQueueScheduler(label: "ui")) { screen, change in
    ///         screen.apply(change)
    ///     }
    @discardableResult
    public func observe<Owner: AnyObject>(
        owner: Owner,
        on scheduler: any Scheduler,
        _ callback: @escaping (Owner, Value) -> Void
    ) -> any Disposable {
        let observation = deliver(on: scheduler).observe(owner: owner, callback)
        (self as? ObservationHost)?.ownedObservations.add(owner: owner, observation)
        return observation
    }

    /// Observes the next value only, then ends the observation (a one-shot observer).
    ///
    ///     session.loggedIn.observeOnce { user in print("welcome, \(user)") }
    @discardableResult
    public func observeOnce(_ callback: @escaping (Value) -> Void) -> any Disposable {
        let subscription = SerialDisposable()
        subscription.disposable = subscribeNext { value in
            if subscription.isDisposed { return }
            subscription.dispose()
            callback(value)
        }
        return subscription
    }
}
