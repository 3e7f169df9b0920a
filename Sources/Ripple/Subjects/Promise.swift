/// SwiftSignalKit's `Promise`: the latest value of a replaceable source signal.
///
/// `set(_:)` disposes the current source and subscribes to the new one at once; each value
/// it sends becomes the promise's value and reaches every `get()` subscriber. `get()` sends
/// the latest value (if there is one), then every later one. A source's completion or
/// error ends only that source: the promise keeps its value and waits for the next `set`.
///
///     let user = Promise<String>()
///     user.get().subscribeNext { print($0) }     // nothing yet
///     user.set(Signal.just("ada"))               // ada
///     user.get().subscribeNext { print($0) }     // ada
public final class Promise<T> {
    private let latest = ReplaySubject<T>(capacity: 1)
    private let source = SerialDisposable()

    /// Creates an empty promise: `get()` sends nothing until a source sends.
    public init() {}

    /// Creates a promise whose value is `value` until a source sends.
    public init(_ value: T) {
        latest.sendNext(value)
    }

    deinit {
        source.dispose()
    }

    /// Replaces the source: disposes the previous one, then subscribes to `signal`.
    public func set<S: SignalProtocol>(_ signal: S) where S.Value == T {
        source.swap(nil)?.dispose()
        let latest = self.latest
        source.disposable = signal.subscribeNext { latest.sendNext($0) }
    }

    /// The latest value, then every later one; never completes.
    public func get() -> Signal<T> {
        latest.asSignal()
    }
}

/// SwiftSignalKit's `MetaDisposable`: a disposable slot whose `set(_:)` disposes the previous one.
public typealias MetaDisposable = SerialDisposable

/// SwiftSignalKit's `DisposableSet`: a group disposed together.
public typealias DisposableSet = CompoundDisposable

/// Sendable when its values are (checked by the compiler: it holds only a subject of them).
extension Promise: Sendable where T: Sendable {}
