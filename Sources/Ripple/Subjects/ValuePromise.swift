/// SwiftSignalKit's `ValuePromise`: a value you set, observed through `get()`.
///
/// `get()` sends the current value, then every later one. With `ignoreRepeated`, setting a
/// value equal to the current one is ignored (nothing is sent).
///
///     let name = ValuePromise("testA", ignoreRepeated: true)
///     name.get().subscribeNext { print($0) }   // testA
///     name.set("testA")                        // ignored
///     name.set("testB")                        // testB
///     name.value                               // "testB"
public final class ValuePromise<T: Equatable> {
    private let subject: BehaviorSubject<T>
    private let ignoreRepeated: Bool

    /// Creates a promise holding `value`.
    public init(_ value: T, ignoreRepeated: Bool = false) {
        subject = BehaviorSubject(value)
        self.ignoreRepeated = ignoreRepeated
    }

    /// The current value.
    public var value: T { subject.value }

    /// Sets the value and sends it to every `get()` subscriber (unless repeated and ignored).
    public func set(_ value: T) {
        if ignoreRepeated {
            // `==` is user code: compare a copy of the current value outside the subject's
            // lock, then send only if that value is still current (no set in between); else
            // compare again. Two racing equal sets still send once.
            while true {
                let (current, version) = subject.storage.withHistory { ($0.value, $0.version) }
                if current == value { return }
                var stale = false
                subject.storage.send(.next(value), accept: { history in
                    stale = history.version != version
                    return !stale
                })
                if !stale { return }
            }
        } else {
            subject.sendNext(value)
        }
    }

    /// The current value, then every later one; never completes.
    public func get() -> Signal<T> {
        subject.asSignal()
    }
}

/// Sendable when its values are (checked by the compiler: its fields are a subject of them and a lock).
extension ValuePromise: Sendable where T: Sendable {}
