/// A subject that replays recent values to each new subscriber (RAC's `RACReplaySubject`).
///
/// A new subscriber first gets the retained values in order, then the terminal event if
/// there was one, then live values. It keeps at most `capacity` values in a ring (O(1) per
/// send; memory follows what is held, not the capacity), and with `maxAge` drops values
/// older than that on `scheduler`'s clock, so an expired value is never replayed even when
/// nothing new was sent.
///
///     let recent = ReplaySubject<String>(capacity: 2)
///     recent.sendNext("a"); recent.sendNext("b"); recent.sendNext("c")
///     recent.subscribeNext { print($0) }        // b, c
///
///     let fresh = ReplaySubject<Int>(capacity: 100, maxAge: .seconds(30), scheduler: clock)
///
/// Threading is as for `Subject`; the replay is snapshotted when the subscriber joins and
/// delivered before any value sent after that.
public final class ReplaySubject<Value>: SignalProtocol, SubscriberProtocol, SerializingReceiver {
    @usableFromInline let storage: SubjectStorage<Value, ReplayHistory<Value>>

    /// The most values retained.
    public let capacity: Int

    /// Creates a replay subject keeping the last `capacity` values (unlimited by default).
    ///
    /// - Precondition: `capacity` is at least 1.
    @inlinable
    public init(capacity: Int = .max) {
        precondition(capacity >= 1, "ReplaySubject(capacity:) needs a capacity of at least 1, got \(capacity)")
        self.capacity = capacity
        storage = SubjectStorage(history: ReplayHistory(capacity: capacity, maxAge: nil, clock: nil))
    }

    /// Creates a replay subject keeping at most `capacity` values, none older than `maxAge`
    /// on `scheduler`'s clock.
    ///
    /// - Precondition: `capacity` is at least 1 and `maxAge` is not negative.
    @inlinable
    public init(capacity: Int = .max, maxAge: Duration, scheduler: any Scheduler) {
        precondition(capacity >= 1, "ReplaySubject(capacity:maxAge:scheduler:) needs a capacity of at least 1, got \(capacity)")
        precondition(maxAge >= .zero, "ReplaySubject(capacity:maxAge:scheduler:) needs a maxAge of zero or more, got \(maxAge)")
        self.capacity = capacity
        storage = SubjectStorage(history: ReplayHistory(capacity: capacity, maxAge: maxAge, clock: scheduler))
    }

    /// How many values a new subscriber would be replayed now.
    public var retainedCount: Int {
        let now = storage.clockTime  // user code: read before locking
        let (count, expired) = storage.withHistory { $0.liveCount(at: now) }
        _ = expired  // released after unlocking
        return count
    }

    /// Records `value` and sends it to every current subscriber.
    @inlinable public func sendNext(_ value: Value) { storage.send(.next(value)) }

    /// Sends `value` to one subscription of this subject only (Uber Signals' firing to one
    /// observer), in the subject's order: the same ordering, waiting and re-entrancy rules as
    /// `sendNext(_:)`, and the same thread.
    ///
    /// Nothing is recorded: other and later subscribers never see the value, and it is not replayed. Ignored
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
    /// Fails the subject; later subscribers get the retained values, then the error.
    public func sendError(_ error: any Error) { storage.send(.error(error)) }
    /// Completes the subject; later subscribers get the retained values, then completion.
    public func sendCompleted() { storage.send(.completed) }

    /// Whether the subject has ended.
    public var isDisposed: Bool { storage.terminalEvent != nil }

    /// Adds `subscriber`, which first receives the retained values.
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

/// Sendable only when its values are: a ReplaySubject of non-`Sendable` values stays in one isolation domain.
extension ReplaySubject: @unchecked Sendable where Value: Sendable {}  // all state is in `SubjectStorage`, behind its lock and delivery turn
