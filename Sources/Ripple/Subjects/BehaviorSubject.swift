/// A subject that remembers its latest value (RAC's `RACBehaviorSubject`).
///
/// A new subscriber first gets the latest value — the default before any send — then
/// live values. After completion it gets the latest value and then completion; after an
/// error, the error only. `value` reads the latest value without subscribing.
///
///     let temperature = BehaviorSubject(20)
///     temperature.subscribeNext { print($0) }   // 20
///     temperature.sendNext(21)                  // 21
///     temperature.value                         // 21
///
/// A subscriber that joins while another thread sends gets the current value and then
/// every later one: no gap, no duplicate. Threading is as for `Subject`.
public final class BehaviorSubject<Value>: SignalProtocol, SubscriberProtocol, SerializingReceiver {
    @usableFromInline let storage: SubjectStorage<Value, LatestValue<Value>>

    /// Creates a behavior subject whose latest value is `value` until the first send.
    @inlinable
    public init(_ value: Value) {
        storage = SubjectStorage(history: LatestValue(value: value))
    }

    /// The latest value sent, or the default; updated as soon as `sendNext` is called.
    public var value: Value {
        storage.withHistory { $0.value }
    }

    /// Records `value` as the latest and sends it to every current subscriber.
    @inlinable public func sendNext(_ value: Value) { storage.send(.next(value)) }

    /// Sends `value` to one subscription of this subject only (Uber Signals' firing to one
    /// observer), in the subject's order: the same ordering, waiting and re-entrancy rules as
    /// `sendNext(_:)`, and the same thread.
    ///
    /// Nothing is recorded: other and later subscribers never see the value, and `value` stays what it was. Ignored
    /// (returns false) when `subscription` is not a live subscription returned by this
    /// subject's `subscribe` or `subscribeNext`, or when the subject has ended.
    ///
    ///     let a = subject.subscribeNext { print("a \($0)") }
    ///     subject.subscribeNext { print("b \($0)") }
    ///     subject.sendNext(1, to: a)   // a 1
    ///
    /// - Parameters:
    ///   - value: The value to send.
    ///   - subscription: The disposable that subscribing to this subject returned.
    /// - Returns: Whether the value was accepted for delivery.
    @inlinable @discardableResult
    public func sendNext(_ value: Value, to subscription: any Disposable) -> Bool {
        storage.send(value, to: subscription)
    }
    /// Fails the subject; later subscribers get the error only.
    public func sendError(_ error: any Error) { storage.send(.error(error)) }
    /// Completes the subject; later subscribers get the latest value, then completion.
    public func sendCompleted() { storage.send(.completed) }

    /// Whether the subject has ended.
    public var isDisposed: Bool { storage.terminalEvent != nil }

    /// Adds `subscriber`, which first receives the latest value.
    @inlinable @discardableResult
    public func subscribe(_ subscriber: any SubscriberProtocol<Value>) -> any Disposable {
        storage.subscribe(subscriber)
    }

    /// Stores the closures in the subscription itself: the subject already serializes
    /// delivery, so each delivery is one check and one call.
    @inlinable
    public func makeSubscription(
        next: ((Value) -> Void)?,
        error: ((any Error) -> Void)?,
        completed: (() -> Void)?
    ) -> any Disposable {
        storage.subscribe(next: next, error: error, completed: completed)
    }
}

/// Sendable only when its values are: a BehaviorSubject of non-`Sendable` values stays in one isolation domain.
extension BehaviorSubject: @unchecked Sendable where Value: Sendable {}  // all state is in `SubjectStorage`, behind its lock and delivery turn
