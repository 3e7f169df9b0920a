import Synchronization

/// Owns a group of disposables and disposes them all at once (RAC's `RACCompoundDisposable`).
///
/// Each subscription of a cold signal has one: it holds what the subscribe closure
/// returned and everything the subscription started. Children are disposed in the order
/// they were added, outside the lock, exactly once. Adding to a compound that is already
/// disposed disposes the new child at once.
///
///     let bag = CompoundDisposable()
///     bag.add(a); bag.add(b)
///     bag.dispose()        // disposes a, then b
///     bag.add(c)           // c is disposed at once
public final class CompoundDisposable: Disposable, Sendable {
    private struct State {
        var children: [any Disposable] = []
        var isDisposed = false
    }

    private let state: Lock<State>
    /// Mirrors `state.isDisposed` for lock-free reads on the send path; written under the lock.
    @usableFromInline let disposedFlag = Atomic<Bool>(false)

    /// Creates a compound that owns `disposables`.
    public init(_ disposables: [any Disposable] = []) {
        state = Lock(State(children: disposables))
    }

    /// Whether ``dispose()`` has been called.
    ///
    /// Reading it is thread-safe; once true it stays true.
    ///
    ///     let d = CompoundDisposable([ActionDisposable { print("a") }, ActionDisposable { print("b") }])
    ///     d.isDisposed   // false
    ///     d.dispose()
    ///     d.isDisposed   // true
    @inlinable
    public var isDisposed: Bool {
        disposedFlag.load(ordering: .acquiring)
    }

    deinit {
        // Releasing the children may release a whole chain of subscriptions, one per operator.
        if !StackGuard.hasRoom() {
            var children = state.withLock { state in
                defer { state.children = [] }
                return state.children
            }
            StackGuard.onFreshStack { children.removeAll() }
        }
    }

    /// Adds `disposable` (nil is ignored); if the compound is already disposed, disposes it at once.
    ///
    /// - Returns: `true` when the compound keeps it, `false` when it was disposed at once.
    @discardableResult
    public func add(_ disposable: (any Disposable)?) -> Bool {
        guard let disposable else { return true }
        let kept = state.withLock { state in
            if state.isDisposed { return false }
            state.children.append(disposable)
            return true
        }
        if !kept { disposable.dispose() }
        return kept
    }

    /// How many children it holds now (none once disposed): for tests and diagnostics.
    var childCount: Int { state.withLock { $0.children.count } }

    /// Removes `disposable` without disposing it (compared by identity).
    public func remove(_ disposable: any Disposable) {
        let removed: (any Disposable)? = state.withLock { state in
            guard let index = state.children.lastIndex(where: { $0 === disposable }) else { return nil }
            return state.children.remove(at: index)
        }
        _ = removed  // released outside the lock
    }

    /// Disposes every child in the order added, and every child added later at once.
    ///
    /// Idempotent and thread-safe: only the first call, from any thread, does anything.
    ///
    ///     let d = CompoundDisposable([ActionDisposable { print("a") }, ActionDisposable { print("b") }])
    ///     d.dispose()    // the work happens once
    ///     d.dispose()    // nothing
    public func dispose() {
        // Each subscription of a chain holds its upstream's compound: disposal recurses per operator.
        guard StackGuard.hasRoom() else { return StackGuard.onFreshStack { dispose() } }
        let children: [any Disposable] = state.withLock { state in
            if state.isDisposed { return [] }
            state.isDisposed = true
            disposedFlag.store(true, ordering: .releasing)
            defer { state.children = [] }
            return state.children
        }
        for child in children { child.dispose() }
    }
}
