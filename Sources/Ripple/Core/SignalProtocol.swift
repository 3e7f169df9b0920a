/// Anything that can be subscribed to: `Signal` and every subject.
///
/// Every operator is defined on this protocol, so it is available on signals and
/// subjects alike. Subscription is synchronous on the calling thread unless an operator
/// (`subscribe(on:)`) says otherwise.
///
///     let d = Signal.from([1, 2, 3]).subscribeNext { print($0) }   // prints 1 2 3
public protocol SignalProtocol<Value>: Sendable {
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
    /// Subscribes with closures; every label is optional (RAC's `subscribeNext:error:completed:`).
    ///
    /// Callbacks of one subscription never run at the same time; none runs after a terminal
    /// event or after the returned disposable is disposed. The closures are released when the
    /// subscription ends.
    ///
    ///     let d = signal.subscribe(next: { print($0) }, error: { print("failed: \($0)") }, completed: { print("done") })
    ///     d.dispose()   // stop early
    @inlinable @discardableResult
    public func subscribe(
        next: ((Value) -> Void)? = nil,
        error: ((any Error) -> Void)? = nil,
        completed: (() -> Void)? = nil
    ) -> any Disposable {
        makeSubscription(next: next, error: error, completed: completed)
    }

    /// The default `makeSubscription`: a `Subscriber` holding the closures.
    @inlinable
    public func makeSubscription(
        next: ((Value) -> Void)?,
        error: ((any Error) -> Void)?,
        completed: (() -> Void)?
    ) -> any Disposable {
        subscribe(Subscriber(next: next, error: error, completed: completed))
    }

    /// Subscribes to values only (RAC's `subscribeNext:`).
    ///
    ///     subject.subscribeNext { print("got \($0)") }
    @inlinable @discardableResult
    public func subscribeNext(_ next: @escaping (Value) -> Void) -> any Disposable {
        makeSubscription(next: next, error: nil, completed: nil)
    }

    /// Erases to `Signal<Value>`; subscribing to the result subscribes to `self`.
    ///
    ///     let s: Signal<Int> = subject.asSignal()
    public func asSignal() -> Signal<Value> {
        if let signal = self as? Signal<Value> { return signal }
        return Signal { subscriber in self.subscribe(subscriber) }
    }
}
