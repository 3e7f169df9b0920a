/// SwiftSignalKit's pipe: `signal |> map { … } |> filter { … }` reads top to bottom.
precedencegroup RipplePipePrecedence {
    associativity: left
    higherThan: AssignmentPrecedence
    lowerThan: TernaryPrecedence
}

infix operator |> : RipplePipePrecedence

/// Applies `transform` to `signal`: `signal |> map { $0 + 1 }` is `signal.map { $0 + 1 }`.
///
///     let labels = numbers
///         |> filter { $0 > 2 }
///         |> map { "#\($0)" }
///         |> deliver(on: ui)
public func |> <S: SignalProtocol, R>(signal: S, transform: (S) -> R) -> R {
    transform(signal)
}

/// Pipe form of `SignalProtocol.map(_:)`.
public func map<S: SignalProtocol, U>(_ transform: @escaping (S.Value) -> U) -> (S) -> Signal<U> {
    { $0.map(transform) }
}

/// Pipe form of `SignalProtocol.filter(_:)`.
public func filter<S: SignalProtocol>(_ isIncluded: @escaping (S.Value) -> Bool) -> (S) -> Signal<S.Value> {
    { $0.filter(isIncluded) }
}

/// Pipe form of `SignalProtocol.compactMap(_:)`.
public func compactMap<S: SignalProtocol, U>(_ transform: @escaping (S.Value) -> U?) -> (S) -> Signal<U> {
    { $0.compactMap(transform) }
}

/// Pipe form of `SignalProtocol.scan(_:_:)`.
public func scan<S: SignalProtocol, A>(_ initial: A, _ accumulate: @escaping (A, S.Value) -> A) -> (S) -> Signal<A> {
    { $0.scan(initial, accumulate) }
}

/// Pipe form of `SignalProtocol.take(_:)`.
public func take<S: SignalProtocol>(_ count: Int) -> (S) -> Signal<S.Value> {
    { $0.take(count) }
}

/// Pipe form of `SignalProtocol.skip(_:)`.
public func skip<S: SignalProtocol>(_ count: Int) -> (S) -> Signal<S.Value> {
    { $0.skip(count) }
}

/// Pipe form of `SignalProtocol.distinctUntilChanged()`: `signal |> distinctUntilChanged`.
public func distinctUntilChanged<S: SignalProtocol>(_ signal: S) -> Signal<S.Value> where S.Value: Equatable {
    signal.distinctUntilChanged()
}

/// Pipe form of `SignalProtocol.flatMap(_:)` (SwiftSignalKit's `mapToSignal`).
public func flatMap<S: SignalProtocol, Inner: SignalProtocol>(
    _ transform: @escaping (S.Value) -> Inner
) -> (S) -> Signal<Inner.Value> {
    { $0.flatMap(transform) }
}

/// Pipe form of `SignalProtocol.then(_:)`.
public func then<S: SignalProtocol, Other: SignalProtocol>(_ other: Other) -> (S) -> Signal<Other.Value> {
    { $0.then(other) }
}

/// Pipe form of `SignalProtocol.deliver(on:)` (SwiftSignalKit's `deliverOn`).
public func deliver<S: SignalProtocol>(on scheduler: any Scheduler) -> (S) -> Signal<S.Value> where S.Value: Sendable {
    { $0.deliver(on: scheduler) }
}

/// Pipe form of `SignalProtocol.delay(_:on:)`.
public func delay<S: SignalProtocol>(_ interval: Duration, on scheduler: any Scheduler) -> (S) -> Signal<S.Value> where S.Value: Sendable {
    { $0.delay(interval, on: scheduler) }
}

/// Pipe form of `SignalProtocol.debounce(_:on:)`.
public func debounce<S: SignalProtocol>(_ interval: Duration, on scheduler: any Scheduler) -> (S) -> Signal<S.Value> where S.Value: Sendable {
    { $0.debounce(interval, on: scheduler) }
}

/// Pipe form of `SignalProtocol.throttle(_:on:)`.
public func throttle<S: SignalProtocol>(_ interval: Duration, on scheduler: any Scheduler) -> (S) -> Signal<S.Value> where S.Value: Sendable {
    { $0.throttle(interval, on: scheduler) }
}

/// Pipe form of `SignalProtocol.catchTo(_:)`.
public func catchTo<S: SignalProtocol, Other: SignalProtocol>(_ replacement: Other) -> (S) -> Signal<S.Value>
where Other.Value == S.Value {
    { $0.catchTo(replacement) }
}

/// Pipe form of `SignalProtocol.onNext(_:)`.
public func onNext<S: SignalProtocol>(_ action: @escaping (S.Value) -> Void) -> (S) -> Signal<S.Value> {
    { $0.onNext(action) }
}
