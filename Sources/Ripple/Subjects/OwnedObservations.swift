import Synchronization

/// A subject's `observe(owner:)` observations, so that those whose owner is gone are released
/// even while no value arrives, at amortized O(1) cost per subscribe and per observation.
///
/// Each entry holds its owner weakly and the observation's disposable. The entries form a
/// queue that the subject's subscribes walk round-robin: every subscribe (`purge()`) examines
/// the `checkedPerSubscribe` oldest entries, putting each one back at the end if its owner
/// lives and its observation is not disposed. If the owner was freed, the entry is dropped and
/// its observation disposed, which releases its closure and captures. If the observation was
/// already disposed, the entry is dropped. New entries join at the end, behind every entry
/// already there, so a dead owner's observation is released within
/// `ceil(n / checkedPerSubscribe)` subscribes to the subject, n being the number of entries
/// when the owner went, however many observations are added meanwhile.
///
/// When the entries reach twice the number that survived the last full sweep (and at least
/// `sweepFloor`), `add` sweeps them all. A sweep of N entries follows at least N / 2 adds, so
/// it costs O(1) per add, and the queue never holds more than twice the observations that
/// were live at its last sweep, plus `sweepFloor`.
///
/// Examining an entry reads a weak reference and the disposable's `isDisposed` under the
/// lock: no user code. The disposals and the releases run after unlocking.
@usableFromInline
final class OwnedObservations: Sendable {
    struct Entry: @unchecked Sendable {  // only inside `state`'s lock, or handed out to be disposed
        weak var owner: AnyObject?
        let observation: any Disposable
    }

    /// Guarded by `state`.
    struct State: Sendable {
        /// The entries, oldest first: the walk examines the oldest.
        var entries = RingBuffer<Entry>(capacity: .max)
        /// The count at which `add` sweeps every entry: twice the survivors of the last sweep,
        /// at least `sweepFloor`.
        var sweepAt = OwnedObservations.sweepFloor
        /// How many entries walks and sweeps have examined, in all (so tests can count the work).
        var examined = 0
    }

    /// Entries taken out under the lock, to be disposed or released after it.
    struct Gone {
        /// Entries whose owner was freed: their observations are to be disposed.
        var dead: [Entry] = []
        /// Entries whose observation was already disposed: only to be released.
        var disposed: [Entry] = []
        /// The owners found alive, held so that their release comes after unlocking.
        var owners: [AnyObject] = []

        /// Disposes the dead entries' observations (after unlocking).
        func disposeDead() {
            for entry in dead { entry.observation.dispose() }
        }
    }

    /// How many entries each subscribe examines: the 4 of the ⌈n/4⌉ that `observe(owner:)`
    /// documents.
    static let checkedPerSubscribe = 4
    /// The fewest entries at which `add` sweeps.
    static let sweepFloor = 16

    private let state = Lock(State())
    /// How many entries there are: lets a subscribe skip the lock when there are none.
    @usableFromInline let count = Atomic<Int>(0)

    @usableFromInline init() {}

    /// How many entries walks and sweeps have examined since the subject was made.
    var examined: Int { state.withLock { $0.examined } }

    /// Registers an observation on behalf of `owner`; sweeps every entry when their number has
    /// doubled since the last sweep.
    func add(owner: AnyObject, _ observation: any Disposable) {
        var gone = Gone()
        state.withLock { state in
            state.entries.append(Entry(owner: owner, observation: observation))
            if state.entries.count >= state.sweepAt { Self.sweep(&state, into: &gone) }
            count.store(state.entries.count, ordering: .relaxed)
        }
        gone.disposeDead()
    }  // `gone` is released here, outside the lock

    /// Examines the `checkedPerSubscribe` oldest entries: disposes the observations whose owner
    /// is gone and forgets the disposed ones.
    @inlinable
    func purge() {
        if count.load(ordering: .relaxed) == 0 { return }
        purgeOldest()
    }

    @usableFromInline
    func purgeOldest() {
        var gone = Gone()
        state.withLock { state in
            for _ in 0..<Swift.min(Self.checkedPerSubscribe, state.entries.count) {
                Self.examineOldest(&state, into: &gone)
            }
            count.store(state.entries.count, ordering: .relaxed)
        }
        gone.disposeDead()
    }  // `gone` is released here, outside the lock

    /// Examines every entry, then waits for the survivors to double before the next sweep.
    private static func sweep(_ state: inout State, into gone: inout Gone) {
        for _ in 0..<state.entries.count { examineOldest(&state, into: &gone) }
        state.sweepAt = Swift.max(2 * state.entries.count, sweepFloor)
    }

    /// Examines the oldest entry: moves it to the end if its owner lives and its observation
    /// is not disposed, else takes it out into `gone`. Reads a weak reference and `isDisposed`:
    /// no user code.
    private static func examineOldest(_ state: inout State, into gone: inout Gone) {
        guard let entry = state.entries.first else { return }
        state.examined += 1
        // Reading a weak reference makes a strong one; if the owner's last other reference goes
        // meanwhile, releasing it here would run the owner's deinit under the lock: it is
        // released with `gone`, after unlocking.
        guard let owner = entry.owner else {
            state.entries.removeFirst()
            gone.dead.append(entry)
            return
        }
        gone.owners.append(owner)
        if entry.observation.isDisposed {
            state.entries.removeFirst()
            gone.disposed.append(entry)
        } else if state.entries.count > 1 {  // a lone entry stays put: no churn of the ring's storage
            state.entries.removeFirst()
            state.entries.append(entry)
        }
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
