/// Anything that receives a signal's events: a `Subscriber`, or any subject.
///
/// Implementations must be safe to call from any thread. Ripple's own subscribers
/// serialize: callbacks never overlap and nothing is delivered after a terminal event.
///
///     let subject = Subject<Int>()
///     Signal.from([1, 2]).subscribe(subject)   // a subject is a subscriber
public protocol SubscriberProtocol<Value>: AnyObject, Sendable {
    /// The type of the values received.
    associatedtype Value
    /// Receives a value.
    func sendNext(_ value: Value)
    /// Receives the error that ends the stream.
    func sendError(_ error: any Error)
    /// Receives the completion that ends the stream.
    func sendCompleted()
    /// Whether this subscriber takes no more events; a long-running producer polls it
    /// to stop early. Defaults to `false`.
    var isDisposed: Bool { get }
}

extension SubscriberProtocol {
    /// Defaults to `false`: the subscriber never asks its producer to stop.
    public var isDisposed: Bool { false }

    /// Sends one event: `next`, `error` or `completed`.
    ///
    ///     subscriber.send(.next(1))
    @inlinable
    public func send(_ event: Event<Value>) {
        switch event {
        case .next(let value): sendNext(value)
        case .error(let error): sendError(error)
        case .completed: sendCompleted()
        }
    }
}
