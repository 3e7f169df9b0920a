/// Anything that receives a signal's events: a `Subscriber`, or any subject.
///
/// Implementations must be safe to call from any thread. Ripple serializes what reaches a
/// subscriber: subscribed to a `Signal`, a conformer's methods never run concurrently and
/// nothing reaches it after a terminal event, whatever threads the producer sends on.
///
///     let subject = Subject<Int>()
///     Signal.from([1, 2]).subscribe(subject)   // a subject is a subscriber
public protocol SubscriberProtocol<Value>: AnyObject {
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

/// A receiver that serializes what it delivers by itself (a `Subscriber`, a subject, a
/// passthrough subscriber, which forwards to one of those): `Signal.subscribe` hands it events
/// as they come. Any other `SubscriberProtocol` conformer is wrapped in a `Subscriber`, so its
/// methods never run concurrently and never after a terminal event, whatever thread sends.
@usableFromInline
protocol SerializingReceiver: AnyObject {}
