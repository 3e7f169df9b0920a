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
/// subject accepted them; a send from inside a subscriber's callback is queued and delivered
/// to every subscriber after the current one, so order holds and nothing deadlocks. A send
/// that arrives while another thread is delivering returns at once; that thread delivers it.
///
/// Lifetime: a subject keeps its subscribers until they are disposed or it ends; a
/// subscriber's closure that captures the subject therefore keeps both alive until then
/// (dispose it, or capture the subject weakly). A subject that is released without ending
/// disposes the subscriptions it still has — no terminal event, but their cleanup runs —
/// since nothing can reach them any more (as RxSwift and RAC drop theirs).
public final class Subject<Value>: SignalProtocol, SubscriberProtocol, SerializingReceiver, @unchecked Sendable {
    @usableFromInline let storage = SubjectStorage<Value, NoHistory<Value>>(history: NoHistory())

    /// Creates a subject with no subscribers.
    public init() {}

    /// Sends `value` to every current subscriber.
    @inlinable public func sendNext(_ value: Value) { storage.send(.next(value)) }
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
