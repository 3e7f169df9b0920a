/// A hot signal you send on yourself, with no history (RAC's `RACSubject`).
///
/// A subscriber sees only what is sent after it subscribed, then the terminal event;
/// subscribing after the terminal event gets it at once. It is also a subscriber, so
/// `signal.subscribe(subject)` multicasts a cold signal. Use it to replace a delegate:
///
///     final class Downloader {
///         let progress = Subject<Double>()      // instead of a delegate protocol
///         func report(_ p: Double) { progress.sendNext(p) }
///     }
///     downloader.progress.subscribeNext { print("progress \($0)") }
///
/// Thread-safe. Sends from several threads are delivered one at a time, in the order the
/// subject accepted them, and callbacks of one subject never overlap.
///
/// When a send returns: a send, completion or subscribe returns once its event (or the new
/// subscriber's replay) has been delivered to every subscriber, as RAC's `sendNext:` does. A
/// thread that finds another one delivering waits its turn, first come first served: the
/// delivering thread delivers up to 16 waiting threads' events for them, then hands the turn
/// to the next waiting thread, which delivers its own. So no send or subscribe does more than
/// a bounded amount of other threads' work — a subscribe that meets a flood of sends returns
/// after its replay — and a producer faster than the subscribers is slowed to their pace
/// instead of piling up memory. Two exceptions return at once, leaving the event to the delivering thread: a send
/// from inside one of this subject's callbacks (re-entrant: it is delivered to every
/// subscriber after the current callback, so order holds and nothing deadlocks), and a send
/// whose wait would close a cycle (this thread delivers a subject whose callbacks the other
/// thread is waiting to send to). See <doc:DeliveryTurn>.
///
/// Lifetime: a subject keeps its subscribers until they are disposed or it ends; a
/// subscriber's closure that captures the subject therefore keeps both alive until then
/// (dispose it, or capture the subject weakly). A subject that is released without ending
/// disposes the subscriptions it still has — no terminal event, but their cleanup runs —
/// since nothing can reach them any more (as RxSwift and RAC drop theirs).
public final class Subject<Value>: SignalProtocol, SubscriberProtocol, SerializingReceiver {
    @usableFromInline let storage: SubjectStorage<Value, NoHistory<Value>>

    /// Creates a subject with no subscribers.
    ///
    /// Inlinable, so the storage is made by code specialized for `Value`: its dispose path
    /// (`SubjectStorage.removeEntry`) then runs specialized too.
    @inlinable
    public init() {
        storage = SubjectStorage(history: NoHistory())
    }

    /// Sends `value` to every current subscriber.
    @inlinable public func sendNext(_ value: Value) { storage.send(.next(value)) }

    /// Sends `value` to one subscription of this subject only (Uber Signals' firing to one
    /// observer), in the subject's order: the same ordering, waiting and re-entrancy rules as
    /// `sendNext(_:)`, and the same thread.
    ///
    /// Nothing is recorded: other and later subscribers never see the value. Ignored
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
    /// Fails the subject: every subscriber, current and later, gets `error`.
    public func sendError(_ error: any Error) { storage.send(.error(error)) }
    /// Completes the subject: every subscriber, current and later, gets completion.
    public func sendCompleted() { storage.send(.completed) }

    /// Whether the subject has ended (a producer feeding it may stop).
    public var isDisposed: Bool { storage.terminalEvent != nil }

    /// Adds `subscriber`; the returned disposable removes it at once.
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

/// Sendable only when its values are: a Subject of non-`Sendable` values stays in one isolation domain.
extension Subject: @unchecked Sendable where Value: Sendable {}  // all state is in `SubjectStorage`, behind its lock and delivery turn
