import Synchronization

/// A subject's `observe(owner:)` observations, so that those whose owner is gone can be
/// removed when anyone subscribes — not only when the next value arrives.
///
/// Each entry holds its owner weakly and the observation's disposable. `purge()` (called by
/// every subscribe to the subject) disposes the observations whose owner was freed, releasing
/// their closures and captures, and forgets the ones already disposed. Checking a weak
/// reference runs no user code; the disposals run after unlocking.
@usableFromInline
final class OwnedObservations: Sendable {
    struct Entry: @unchecked Sendable {  // only inside `entries`' lock, or handed out to be disposed
        weak var owner: AnyObject?
        let observation: any Disposable
    }

    private let entries = Lock<[Entry]>([])
    /// How many entries there are: lets a subscribe skip the lock when there are none.
    @usableFromInline let count = Atomic<Int>(0)

    @usableFromInline init() {}

    /// Registers an observation on behalf of `owner`.
    func add(owner: AnyObject, _ observation: any Disposable) {
        entries.withLock { entries in
            entries.append(Entry(owner: owner, observation: observation))
            count.store(entries.count, ordering: .relaxed)
        }
    }

    /// Disposes the observations whose owner is gone and forgets the disposed ones.
    @inlinable
    func purge() {
        if count.load(ordering: .relaxed) == 0 { return }
        purgeDead()
    }

    @usableFromInline
    func purgeDead() {
        let (dead, removed): ([Entry], [Entry]) = entries.withLock { entries in
            var dead: [Entry] = [], removed: [Entry] = []
            entries.removeAll { entry in
                if entry.owner == nil { dead.append(entry); return true }
                if entry.observation.isDisposed { removed.append(entry); return true }
                return false
            }
            count.store(entries.count, ordering: .relaxed)
            return (dead, removed)
        }
        _ = removed  // released here, outside the lock
        for entry in dead { entry.observation.dispose() }
    }
}

/// A subject that keeps its `observe(owner:)` observations (`Subject`, `BehaviorSubject`,
/// `ReplaySubject`).
protocol ObservationHost {
    var ownedObservations: OwnedObservations { get }
}

extension Subject: ObservationHost {
    var ownedObservations: OwnedObservations { storage.owned }
}

extension BehaviorSubject: ObservationHost {
    var ownedObservations: OwnedObservations { storage.owned }
}

extension ReplaySubject: ObservationHost {
    var ownedObservations: OwnedObservations { storage.owned }
}
