

/// Holds one disposable per key (SwiftSignalKit's `DisposableDict`).
///
/// Setting a key disposes the disposable it replaces; setting nil disposes and removes it.
/// `dispose()` disposes all of them; anything set afterwards is disposed at once.
///
///     let requests = KeyedDisposable<String>()
///     requests["avatar"] = load(avatarURL)
///     requests["avatar"] = load(newAvatarURL)   // the first load is disposed
///     requests.dispose()                        // every load is disposed
public final class KeyedDisposable<Key: Hashable & Sendable>: Disposable, Sendable {
    private struct State {
        var disposables: [Key: any Disposable] = [:]
        var isDisposed = false
    }

    private let state = Lock(State())

    /// Creates an empty keyed disposable.
    public init() {}

    /// Whether ``dispose()`` has been called.
    ///
    /// Reading it is thread-safe; once true it stays true.
    ///
    ///     let d = KeyedDisposable<String>(); d["search"] = ActionDisposable { print("search cancelled") }
    ///     d.isDisposed   // false
    ///     d.dispose()
    ///     d.isDisposed   // true
    public var isDisposed: Bool {
        state.withLock { $0.isDisposed }
    }

    /// The disposable held for `key`; setting it disposes the previous one.
    public subscript(key: Key) -> (any Disposable)? {
        get { state.withLock { $0.disposables[key] } }
        set {
            let (previous, rejected): ((any Disposable)?, Bool) = state.withLock { state in
                if state.isDisposed { return (nil, true) }
                if let newValue {
                    return (state.disposables.updateValue(newValue, forKey: key), false)
                }
                return (state.disposables.removeValue(forKey: key), false)
            }
            previous?.dispose()
            if rejected { newValue?.dispose() }
        }
    }

    /// Disposes the disposable held for every key, and any set afterwards at once.
    ///
    /// Idempotent and thread-safe: only the first call, from any thread, does anything.
    ///
    ///     let d = KeyedDisposable<String>(); d["search"] = ActionDisposable { print("search cancelled") }
    ///     d.dispose()    // the work happens once
    ///     d.dispose()    // nothing
    public func dispose() {
        let all: [Key: any Disposable] = state.withLock { state in
            if state.isDisposed { return [:] }
            state.isDisposed = true
            defer { state.disposables = [:] }
            return state.disposables
        }
        for disposable in all.values { disposable.dispose() }
    }
}
