import Synchronization

/// When an owner's life ends (ReactiveSwift's `Lifetime`).
///
/// `Lifetime.make()` returns a lifetime and its token; the lifetime ends when the token is
/// deinitialized (keep it as a property of the owner) or `end()`ed. Work observing it ends
/// then: `take(during:)` completes, `observeEnded` actions run.
///
///     final class Screen {
///         private let token: Lifetime.Token
///         let lifetime: Lifetime
///         init(updates: Subject<String>) {
///             (lifetime, token) = Lifetime.make()
///             updates.take(during: lifetime).subscribeNext { print($0) }
///         }
///     }   // the subscription completes when the screen is freed
public final class Lifetime: Sendable {
    /// Ends its lifetime when deinitialized.
    public final class Token: Sendable {
        fileprivate let observers = Observers()

        /// Ends the lifetime now (it also ends when the token is deinitialized).
        public func end() { observers.end() }

        deinit { observers.end() }
    }

    private let observers: Observers

    private init(_ observers: Observers) {
        self.observers = observers
    }

    /// A new lifetime and the token that ends it.
    public static func make() -> (lifetime: Lifetime, token: Token) {
        let token = Token()
        return (Lifetime(token.observers), token)
    }

    /// A lifetime that has already ended.
    public static let empty: Lifetime = {
        let (lifetime, token) = make()
        token.end()
        return lifetime
    }()

    /// Whether the lifetime has ended.
    public var hasEnded: Bool { observers.hasEnded }

    /// Runs `action` when the lifetime ends (at once if it has). Disposing the result before
    /// the end reaches the action cancels it and releases it at once.
    ///
    /// The actions added before the end run in the order they were added, outside any lock,
    /// each once; one disposed by an earlier action while the end runs does not run. An action
    /// added once the end has begun runs at once, in the caller. Cancelling is constant work
    /// however many observations the lifetime has (a long-lived owner whose short-lived
    /// `take(during:)` subscriptions come and go).
    ///
    ///     let (lifetime, token) = Lifetime.make()
    ///     lifetime.observeEnded { print("ended") }
    ///     token.end()   // prints "ended"
    @discardableResult
    public func observeEnded(_ action: @escaping () -> Void) -> any Disposable {
        let observer = ActionDisposable(action)
        guard let key = observers.add(observer) else {
            observer.dispose()
            return DisposedDisposable.shared
        }
        return ActionDisposable { [observers] in observers.remove(key) }
    }
}

extension Lifetime {
    /// The actions waiting for one lifetime's end, keyed by the order they were added.
    ///
    /// A dictionary finds each action at once, so cancelling costs the same however many are
    /// kept and whichever goes; the end sorts the keys once to keep the order of adding, then
    /// takes each action out just before running it, so one cancelled meanwhile (by an earlier
    /// action) does not run.
    ///
    /// Invariants (under `state`): keys are never reused; once `hasEnded`, nothing is added
    /// and the end takes every action out, each once.
    fileprivate final class Observers: Sendable {
        private struct State {
            var actions: [UInt64: ActionDisposable] = [:]
            var nextKey: UInt64 = 0
            var hasEnded = false
        }

        private let state = Lock(State())
        /// Mirrors `state.hasEnded` for lock-free reads; written under the lock.
        private let ended = Atomic<Bool>(false)

        var hasEnded: Bool { ended.load(ordering: .acquiring) }

        /// Keeps `action` until the end; nil (and `action` not kept) if the lifetime has ended.
        func add(_ action: ActionDisposable) -> UInt64? {
            state.withLock { state in
                if state.hasEnded { return nil }
                defer { state.nextKey += 1 }
                state.actions[state.nextKey] = action
                return state.nextKey
            }
        }

        /// Forgets the action added under `key`, releasing it outside the lock.
        func remove(_ key: UInt64) {
            let removed = state.withLock { $0.actions.removeValue(forKey: key) }
            _ = removed
        }

        /// Ends the lifetime: runs every action kept, in the order added, once (skipping any
        /// cancelled meanwhile), then lets go of the emptied table.
        func end() {
            // A token may be released deep in a chain: run the actions where there is stack.
            guard StackGuard.hasRoom() else { return StackGuard.onFreshStack { end() } }
            let keys: [UInt64]? = state.withLock { state in
                if state.hasEnded { return nil }
                state.hasEnded = true
                ended.store(true, ordering: .releasing)
                return Array(state.actions.keys)
            }
            guard let keys else { return }
            for key in keys.sorted() {
                let action = state.withLock { $0.actions.removeValue(forKey: key) }
                action?.dispose()  // nil: cancelled meanwhile
            }
            // `removeValue` never shrinks a dictionary: free the empty table (no element left
            // to deinitialize under the lock).
            state.withLock { $0.actions = [:] }
        }
    }
}
