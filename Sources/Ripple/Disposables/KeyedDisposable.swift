/// Holds one disposable per key (SwiftSignalKit's `DisposableDict`).
///
/// Setting a key disposes the disposable it replaces; setting nil disposes and removes it.
/// `dispose()` disposes all of them; anything set afterwards is disposed at once.
///
/// A key's `hash(into:)`, `==` and `deinit` are user code, so none of them runs under the
/// lock: a key may even use the same `KeyedDisposable` from its `==` or its `deinit`. (A key
/// whose `==` sets a key of the same hash every time it runs makes the set it interrupts
/// compare again, for ever: a set retries until its bucket held still while it compared.) Entries
/// live in buckets by hash value (an `Int`, hashed by the lock's owner without user code); a
/// set hashes its key first, looks its bucket up under the lock, compares keys after
/// unlocking, and applies its change under the lock only if the bucket has not changed
/// meanwhile (else it compares again). Replaced keys and disposables are released after
/// unlocking. A `Dictionary<Key, …>` inside the lock would hash and compare there.
///
///     let requests = KeyedDisposable<String>()
///     requests["avatar"] = load(avatarURL)
///     requests["avatar"] = load(newAvatarURL)   // the first load is disposed
///     requests.dispose()                        // every load is disposed
public final class KeyedDisposable<Key: Hashable & Sendable>: Disposable, Sendable {
    /// The entries whose keys share one hash value, and the version of their last change.
    private struct Bucket {
        var entries: [(key: Key, disposable: any Disposable)] = []
        var version = 0
    }

    /// Guarded by `state`.
    private struct State: Sendable {
        var buckets: [Int: Bucket] = [:]
        /// Stamps each bucket change, so a set can tell its comparison is still valid.
        var changes = 0
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
        get {
            let hash = Self.hash(key)
            let bucket = state.withLock { $0.buckets[hash] }
            guard let bucket, let index = Self.index(of: key, in: bucket) else { return nil }
            return bucket.entries[index].disposable
        }  // `bucket` is released here, after unlocking
        set {
            let hash = Self.hash(key)
            var released: [(key: Key, disposable: any Disposable)] = []
            var rejected = false
            while true {
                let bucket = state.withLock { $0.buckets[hash] } ?? Bucket()
                let index = Self.index(of: key, in: bucket)  // user code: outside the lock
                let applied: Bool = state.withLock { state in
                    if state.isDisposed {
                        rejected = true
                        return true
                    }
                    guard (state.buckets[hash]?.version ?? 0) == bucket.version else { return false }
                    state.changes += 1
                    var current = state.buckets.removeValue(forKey: hash) ?? Bucket()
                    if let index {
                        released.append(current.entries.remove(at: index))
                    }
                    if let newValue {
                        current.entries.append((key, newValue))
                    }
                    current.version = state.changes
                    if !current.entries.isEmpty { state.buckets[hash] = current }
                    return true
                }
                if applied { break }
            }
            for entry in released { entry.disposable.dispose() }
            if rejected { newValue?.dispose() }
        }  // replaced keys and disposables are released here, after unlocking
    }

    /// Disposes the disposable held for every key, and any set afterwards at once.
    ///
    /// Idempotent and thread-safe: only the first call, from any thread, does anything.
    ///
    ///     let d = KeyedDisposable<String>(); d["search"] = ActionDisposable { print("search cancelled") }
    ///     d.dispose()    // the work happens once
    ///     d.dispose()    // nothing
    public func dispose() {
        let all: [Int: Bucket] = state.withLock { state in
            if state.isDisposed { return [:] }
            state.isDisposed = true
            defer { state.buckets = [:] }
            return state.buckets
        }
        for bucket in all.values {
            for entry in bucket.entries { entry.disposable.dispose() }
        }
    }

    /// The key's hash value (user code: called outside the lock).
    private static func hash(_ key: Key) -> Int {
        RippleDebug.checkNoLockHeld("a KeyedDisposable key's hash(into:)")
        return key.hashValue
    }

    /// Where `key` sits in `bucket` (user code: called outside the lock).
    private static func index(of key: Key, in bucket: Bucket) -> Int? {
        if bucket.entries.isEmpty { return nil }
        RippleDebug.checkNoLockHeld("a KeyedDisposable key's ==")
        return bucket.entries.firstIndex { $0.key == key }
    }
}
