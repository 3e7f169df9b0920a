/// Anything that can be subscribed to: `Signal` and every subject.
///
/// Every operator is defined on this protocol, so it is available on signals and
/// subjects alike. Subscription is synchronous on the calling thread unless an operator
/// (`subscribe(on:)`) says otherwise.
///
///     let d = Signal.from([1, 2, 3]).subscribeNext { print($0) }   // prints 1 2 3
public protocol SignalProtocol<Value> {
    /// The type of the values sent.
    associatedtype Value
    /// Subscribes `subscriber`; its events arrive until a terminal event or until the
    /// returned disposable is disposed.
    @discardableResult
    func subscribe(_ subscriber: any SubscriberProtocol<Value>) -> any Disposable
    /// How `subscribe(next:error:completed:)` subscribes closures. The default wraps them in
    /// a `Subscriber`; subjects store them directly (they already serialize delivery).
    func makeSubscription(
        next: ((Value) -> Void)?,
        error: ((any Error) -> Void)?,
        completed: (() -> Void)?
    ) -> any Disposable
}

extension SignalProtocol {
    /// The default `makeSubscription`: a `Subscriber` holding the closures.
    @inlinable
    public func makeSubscription(
        next: ((Value) -> Void)?,
        error: ((any Error) -> Void)?,
        completed: (() -> Void)?
    ) -> any Disposable {
        subscribe(Subscriber(next: next, error: error, completed: completed))
    }

    /// Erases to `Signal<Value>`; subscribing to the result subscribes to `self`.
    ///
    ///     let s: Signal<Int> = subject.asSignal()
    public func asSignal() -> Signal<Value> {
        if let signal = self as? Signal<Value> { return signal }
        return Signal { subscriber in self.subscribe(subscriber) }
    }
}

// MARK: - Subscribing with closures, on the caller's actor
//
// Every closure-taking subscribe has an `isolation` parameter defaulting to `#isolation`: the
// actor the calling code is isolated to (`MainActor.shared` in `@MainActor` code, `self` in an
// actor's method), or nil in nonisolated code. With an actor, the callbacks run on that actor
// (`ActorDelivery`); without one, on the sending thread, as in RAC. An event that hops to the
// actor carries its value across threads: for `Sendable` values that is what the type allows; a
// signal of non-`Sendable` values is itself not `Sendable`, so checked code cannot send on it from
// another isolation domain in the first place.

extension SignalProtocol {
    /// Subscribes with closures; every label is optional (RAC's `subscribeNext:error:completed:`).
    ///
    /// Callbacks of one subscription never run at the same time; none runs after a terminal
    /// event or after the returned disposable is disposed. The closures are released when the
    /// subscription ends.
    ///
    /// **Isolation.** Called from actor-isolated code (`@MainActor` code, an `actor`'s method),
    /// the callbacks run on that actor, in send order, whatever thread sends: an event sent on
    /// the actor is delivered at once (synchronously, as in nonisolated code); one sent from
    /// elsewhere is queued and delivered by one job on the actor per batch. Called from
    /// nonisolated code, they run on the sending thread. `isolation` is filled in by the
    /// compiler (`#isolation`); pass an actor to choose another.
    /// A closure written in actor-isolated code is isolated to that actor in Swift's eyes, so
    /// a subscription made *inside* one — a cold signal's producer or a hand-written operator
    /// written in `@MainActor` code — delivers on that actor too; write operators in
    /// nonisolated code (a nonisolated function or extension) to forward synchronously. The
    /// queue of events waiting for the actor has no bound.
    ///
    ///     let d = signal.subscribe(next: { print($0) }, error: { print("failed: \($0)") }, completed: { print("done") })
    ///     d.dispose()   // stop early
    ///
    ///     @MainActor final class Screen {
    ///         var count = 0
    ///         func bind(_ ticks: Subject<Int>) {
    ///             ticks.subscribe(next: { self.count = $0 })   // on the main actor, whoever sends
    ///         }
    ///     }
    @inlinable @discardableResult
    public func subscribe(
        isolation: isolated (any Actor)? = #isolation,
        next: ((Value) -> Void)? = nil,
        error: ((any Error) -> Void)? = nil,
        completed: (() -> Void)? = nil
    ) -> any Disposable {
        subscribe(deliveringOn: isolation, next: next, error: error, completed: completed)
    }

    /// Subscribes to values only (RAC's `subscribeNext:`); runs on the caller's actor, if any
    /// (see `subscribe(isolation:next:error:completed:)`).
    ///
    ///     subject.subscribeNext { print("got \($0)") }
    @inlinable @discardableResult
    public func subscribeNext(
        isolation: isolated (any Actor)? = #isolation, _ next: @escaping (Value) -> Void
    ) -> any Disposable {
        subscribe(deliveringOn: isolation, next: next, error: nil, completed: nil)
    }
}
