/// Uber Signals' observers: weak owners, one-shot observers and per-observer schedulers.
///
/// Available on every signal and subject. Each returns a `Disposable` that ends the
/// observation; it can be ignored, since these observers end themselves.
extension SignalProtocol {
    /// Observes values on behalf of `owner`, held weakly and handed back with its own type
    /// (delegate replacement without retain cycles).
    ///
    /// Nothing is delivered once `owner` is freed. The observation, its closure and whatever
    /// that captured are then released: on any signal at the next value; on a subject
    /// (`Subject`, `BehaviorSubject`, `ReplaySubject`) also, if no value comes first, within
    /// ⌈n/4⌉ subscribes to that subject, n being the number of `observe(owner:)` observations
    /// it holds when the owner goes (each subscribe checks the next four of them in turn, so
    /// it stays O(1) however many there are). Disposing the observation releases them at once.
    /// Called from actor-isolated code, the callback runs on that actor (see
    /// `subscribe(isolation:next:error:completed:)`).
    ///
    ///     downloader.progress.observe(owner: self) { screen, progress in
    ///         screen.show(progress)            // `screen` is `self`, never retained
    ///     }
    @discardableResult
    public func observe<Owner: AnyObject>(
        isolation: isolated (any Actor)? = #isolation,
        owner: Owner,
        _ callback: @escaping (Owner, Value) -> Void
    ) -> any Disposable {
        observe(owner: owner, on: isolation, callback)
    }

    /// Observes the next value only, then ends the observation (a one-shot observer). Called
    /// from actor-isolated code, the callback runs on that actor.
    ///
    ///     session.loggedIn.observeOnce { user in print("welcome, \(user)") }
    @discardableResult
    public func observeOnce(
        isolation: isolated (any Actor)? = #isolation, _ callback: @escaping (Value) -> Void
    ) -> any Disposable {
        observeOnce(on: isolation, callback)
    }

    func observe<Owner: AnyObject>(
        owner: Owner, on actor: (any Actor)?, _ callback: @escaping (Owner, Value) -> Void
    ) -> any Disposable {
        let subscription = SerialDisposable()
        let next: (Value) -> Void = { [weak owner] value in
            guard let owner else {
                subscription.dispose()
                return
            }
            callback(owner, value)
        }
        subscription.disposable = subscribe(deliveringOn: actor, next: next, error: nil, completed: nil)
        (self as? ObservationHost)?.ownedObservations.add(owner: owner, subscription)
        return subscription
    }

    func observeOnce(
        on actor: (any Actor)?, _ callback: @escaping (Value) -> Void
    ) -> any Disposable {
        let subscription = SerialDisposable()
        subscription.disposable = subscribe(deliveringOn: actor, next: { value in
            if subscription.isDisposed { return }
            subscription.dispose()
            callback(value)
        }, error: nil, completed: nil)
        return subscription
    }
}

extension SignalProtocol where Value: Sendable {
    /// Observes values on behalf of a weakly held `owner`, delivered on `scheduler`.
    ///
    /// Events keep their order on any scheduler; the owner is checked when each value is
    /// delivered, so none arrives after it is freed. A dead owner's observation is released
    /// as `observe(owner:_:)` says. Called from actor-isolated code, the callback still runs on
    /// that actor (after passing through `scheduler`): to run it on the main actor, use
    /// `MainActorScheduler.shared`; on another actor, `ActorScheduler(actor)`.
    ///
    ///     model.changes.observe(owner: self, on: MainActorScheduler.shared) { screen, change in
    ///         screen.apply(change)
    ///     }
    @discardableResult
    public func observe<Owner: AnyObject>(
        isolation: isolated (any Actor)? = #isolation,
        owner: Owner,
        on scheduler: any Scheduler,
        _ callback: @escaping (Owner, Value) -> Void
    ) -> any Disposable {
        let observation = deliver(on: scheduler).observe(owner: owner, on: isolation, callback)
        (self as? ObservationHost)?.ownedObservations.add(owner: owner, observation)
        return observation
    }
}
