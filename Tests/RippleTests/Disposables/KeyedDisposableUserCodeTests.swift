import CRippleThread
import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// A key whose `==`, `hash(into:)` and `deinit` are user code: each counts the Ripple locks
/// its thread holds (debug builds) and may run an action of the test's.
final class UserCodeKey: Hashable, @unchecked Sendable {  // `id` and the actions are immutable; the counters atomic
    let id: Int
    private let onEquals: (@Sendable () -> Void)?
    private let onDeinit: (@Sendable () -> Void)?
    /// How often `==`, `hash(into:)` or `deinit` of any such key ran while a Ripple lock was held.
    static let underLock = Atomic<Int>(0)

    init(_ id: Int, onEquals: (@Sendable () -> Void)? = nil, onDeinit: (@Sendable () -> Void)? = nil) {
        self.id = id
        self.onEquals = onEquals
        self.onDeinit = onDeinit
    }

    static func noteLocks() {
        if ripple_locks_held_add(0) != 0 { underLock.add(1, ordering: .relaxed) }
    }

    static func == (lhs: UserCodeKey, rhs: UserCodeKey) -> Bool {
        noteLocks()
        lhs.onEquals?()
        return lhs.id == rhs.id
    }

    func hash(into hasher: inout Hasher) {
        Self.noteLocks()
        hasher.combine(id)
    }

    deinit {
        Self.noteLocks()
        onDeinit?()
    }
}

/// `KeyedDisposable` runs none of its keys' code under its lock, so a key may use it.
@Suite(.leakChecked, .serialized) struct KeyedDisposableUserCodeTests {
    @Test func aKeysEqualsHashAndDeinitNeverRunUnderALock() {
        let before = UserCodeKey.underLock.load(ordering: .relaxed)
        let keyed = KeyedDisposable<UserCodeKey>()
        let first = ActionDisposable {}, second = ActionDisposable {}
        keyed[UserCodeKey(1)] = first
        keyed[UserCodeKey(1)] = second  // compares with the stored key, releases the new copy
        #expect(first.isDisposed)
        #expect(keyed[UserCodeKey(1)] === second)
        keyed[UserCodeKey(1)] = nil  // releases the stored key
        #expect(second.isDisposed)
        #expect(keyed[UserCodeKey(1)] == nil)
        keyed[UserCodeKey(2)] = ActionDisposable {}
        keyed.dispose()
        let after = UserCodeKey.underLock.load(ordering: .relaxed)
        #expect(after == before)
    }

    @Test func aKeyWhoseDeinitUsesTheSameKeyedDisposableDoesNotTrap() {
        let keyed = KeyedDisposable<UserCodeKey>()
        let other = ActionDisposable {}
        keyed[UserCodeKey(7)] = other
        let seen = Atomic<Bool>(false)
        keyed[UserCodeKey(1, onDeinit: { [keyed] in
            seen.store(keyed[UserCodeKey(7)] != nil, ordering: .relaxed)
            keyed[UserCodeKey(7)] = nil
        })] = ActionDisposable {}
        keyed[UserCodeKey(1)] = nil  // the stored key goes: its deinit reads and clears key 7
        let sawKey7 = seen.load(ordering: .relaxed)
        #expect(sawKey7)
        #expect(other.isDisposed)
        #expect(keyed[UserCodeKey(7)] == nil)
    }

    @Test func aKeyWhoseEqualsUsesTheSameKeyedDisposableDoesNotTrap() {
        let keyed = KeyedDisposable<UserCodeKey>()
        let reads = Atomic<Int>(0)
        let key = UserCodeKey(3, onEquals: { [keyed] in
            _ = keyed.isDisposed
            reads.add(1, ordering: .relaxed)
        })
        let first = ActionDisposable {}
        keyed[key] = first
        keyed[key] = ActionDisposable {}  // compares `key` with itself
        #expect(first.isDisposed)
        let readCount = reads.load(ordering: .relaxed)
        #expect(readCount > 0)
        keyed.dispose()
    }

    @Test func keysWithTheSameHashKeepTheirOwnDisposables() {
        struct Colliding: Hashable, Sendable {
            let id: Int
            func hash(into hasher: inout Hasher) { hasher.combine(0) }
        }
        let keyed = KeyedDisposable<Colliding>()
        let disposables = (0..<5).map { _ in ActionDisposable {} }
        for (id, disposable) in disposables.enumerated() { keyed[Colliding(id: id)] = disposable }
        for (id, disposable) in disposables.enumerated() { #expect(keyed[Colliding(id: id)] === disposable) }
        keyed[Colliding(id: 2)] = nil
        #expect(disposables[2].isDisposed)
        #expect(disposables.enumerated().filter { !$0.element.isDisposed }.map(\.offset) == [0, 1, 3, 4])
        #expect(keyed[Colliding(id: 3)] === disposables[3])
        keyed.dispose()
        #expect(disposables.allSatisfy { $0.isDisposed })
    }

    @Test(.offThePool) func concurrentSetsOfOneKeyDisposeEveryReplacedDisposableExactlyOnce() {
        let keyed = KeyedDisposable<Int>()
        let disposals = Atomic<Int>(0)
        let perThread = 2_000
        runConcurrently(threads: 4) { _ in
            for _ in 0..<perThread {
                keyed[1] = ActionDisposable { disposals.add(1, ordering: .relaxed) }
            }
        }
        let replaced = disposals.load(ordering: .relaxed)
        #expect(replaced == 4 * perThread - 1, "all but the last one set were replaced")
        keyed.dispose()
        let all = disposals.load(ordering: .relaxed)
        #expect(all == 4 * perThread)
    }
}
