import Synchronization

/// Owns a group of disposables and disposes them all at once (RAC's `RACCompoundDisposable`).
///
/// Each subscription of a cold signal has one: it holds what the subscribe closure
/// returned and everything the subscription started. Children are disposed in the order
/// they were added, outside the lock, exactly once. Adding to a compound that is already
/// disposed disposes the new child at once. Adding and removing a child cost the same however
/// many the compound holds and whichever child goes (amortized; removing a child added more
/// than once searches back to its previous occurrence).
///
///     let bag = CompoundDisposable()
///     bag.add(a); bag.add(b)
///     bag.dispose()        // disposes a, then b
///     bag.add(c)           // c is disposed at once
public final class CompoundDisposable: Disposable, Sendable {
    private struct State {
        var children = Children.few([])
        var isDisposed = false
    }

    /// The children, in the order added.
    ///
    /// A compound usually holds a few (a subscription's upstream and what it started): an
    /// array, which `remove` searches from the newest end. Beyond `indexedAbove` children it
    /// becomes `IndexedChildren`, which finds a child by identity wherever it is: a `flatMap`
    /// whose many inner subscriptions end oldest first would otherwise search and shift every
    /// other child for each. One pointer either way, so a compound is no larger for it.
    private enum Children: Sendable {
        case few([any Disposable])
        case many(IndexedChildren)

        init(_ children: [any Disposable]) {
            self = children.count > CompoundDisposable.indexedAbove ? .many(IndexedChildren(children)) : .few(children)
        }

        mutating func append(_ child: any Disposable) {
            switch consume self {
            case .few(var children):
                children.append(child)
                self = Children(children)
            case .many(let indexed):
                indexed.append(child)
                self = .many(indexed)
            }
        }

        /// Takes out the child added last among those identical to `child`, if any.
        mutating func remove(_ child: any Disposable) -> (any Disposable)? {
            switch consume self {
            case .few(var children):
                let removed = children.lastIndex(where: { $0 === child }).map { children.remove(at: $0) }
                self = .few(children)
                return removed
            case .many(let indexed):
                self = .many(indexed)
                return indexed.remove(child)
            }
        }

        var count: Int {
            switch self {
            case .few(let children): children.count
            case .many(let indexed): indexed.count
            }
        }

        /// Disposes every child in the order added (outside the lock: no one else holds them).
        func disposeAll() {
            switch self {
            case .few(let children):
                for child in children { child.dispose() }
            case .many(let indexed):
                for case let child? in indexed.slots { child.dispose() }
            }
        }
    }

    /// The most children a compound keeps in a plain array.
    static let indexedAbove = 32

    private let state: Lock<State>
    /// Mirrors `state.isDisposed` for lock-free reads on the send path; written under the lock.
    @usableFromInline let disposedFlag = Atomic<Bool>(false)

    /// Creates a compound that owns `disposables`.
    public init(_ disposables: [any Disposable] = []) {
        state = Lock(State(children: Children(disposables)))
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
            var children: Children? = state.withLock { state in
                defer { state.children = .few([]) }
                return state.children
            }
            StackGuard.onFreshStack { _ = children.take() }  // released on the fresh stack
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

    /// Whether the children are indexed by identity (more than `indexedAbove` were held): for tests.
    var isIndexed: Bool {
        state.withLock { state in
            if case .many = state.children { return true }
            return false
        }
    }

    /// Slots that searches and compactions of the indexed children examined (for tests of the
    /// cost); 0 while the children are a plain array.
    var indexedWork: Int {
        state.withLock { state in
            if case .many(let indexed) = state.children { return indexed.work }
            return 0
        }
    }

    /// Removes `disposable` without disposing it (compared by identity; if it was added more
    /// than once, the occurrence added last).
    public func remove(_ disposable: any Disposable) {
        let removed: (any Disposable)? = state.withLock { $0.children.remove(disposable) }
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
        let children: Children? = state.withLock { state in
            if state.isDisposed { return nil }
            state.isDisposed = true
            disposedFlag.store(true, ordering: .releasing)
            defer { state.children = .few([]) }
            return state.children
        }
        children?.disposeAll()
    }
}

/// A compound's children once there are many: in the order added, with a hole (nil) where one
/// was removed, and each child's slot by identity, so a removal finds its child at once and
/// shifts nothing. Holes are squeezed out once they are at least half the slots (and 16), so
/// that costs O(1) per removal, amortized.
///
/// A child added more than once has its latest slot indexed and a count; removing it takes that
/// occurrence out and searches back for the previous one (the only search, for duplicates only).
///
/// Touched only under its compound's lock (or by the thread that took it out of the compound
/// on disposal, when no one else can reach it).
private final class IndexedChildren: @unchecked Sendable {
    private(set) var slots: [(any Disposable)?]
    /// By identity: the slot of the occurrence added last, and how many occurrences there are.
    private var positions: [ObjectIdentifier: (last: Int, count: Int)] = [:]
    private var holes = 0
    /// Slots examined by duplicate searches and compactions (for tests).
    private(set) var work = 0

    var count: Int { slots.count - holes }

    init(_ children: [any Disposable]) {
        slots = []
        slots.reserveCapacity(children.count)
        for child in children { append(child) }
    }

    func append(_ child: any Disposable) {
        let id = ObjectIdentifier(child)
        positions[id] = (slots.count, (positions[id]?.count ?? 0) + 1)
        slots.append(child)
    }

    func remove(_ child: any Disposable) -> (any Disposable)? {
        let id = ObjectIdentifier(child)
        guard let position = positions[id] else { return nil }
        let removed = slots[position.last].take()
        if position.count == 1 {
            positions[id] = nil
        } else {
            var previous = position.last - 1
            while slots[previous].map({ $0 !== child }) ?? true { previous -= 1 }  // one exists before
            work += position.last - previous
            positions[id] = (previous, position.count - 1)
        }
        if position.last == slots.count - 1 {
            slots.removeLast()
        } else {
            holes += 1
        }
        if holes >= 16 && holes * 2 >= slots.count { compact() }
        return removed
    }

    /// Squeezes the holes out, keeping the order, and indexes the new slots.
    private func compact() {
        work += slots.count
        slots.removeAll { $0 == nil }
        holes = 0
        for (slot, child) in slots.enumerated() {
            // Each identity's last slot is its last occurrence's: the later ones overwrite.
            positions[ObjectIdentifier(child.unsafelyUnwrapped)]?.last = slot
        }
    }
}
