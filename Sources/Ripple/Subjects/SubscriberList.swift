/// A subject's subscriptions in subscription order, with O(1) add and remove.
///
/// Removal leaves a hole (the subscription knows its slot) and compaction runs once holes
/// outnumber live entries, so both stay O(1) amortized. A `Set` would lose the order and a
/// plain array would make removal a scan.
///
/// The slots are a buffer the list allocates and frees itself, holding `Unmanaged` references
/// it owns (+1): walking them copies, retains and releases nothing — a `ContiguousArray` here
/// cost a retain and a release of its buffer (two atomic operations) on every send, to keep a
/// snapshot that no delivery needs. Only the thread holding the subject's delivery turn
/// touches the list (`SubjectStorage.held`), and while it walks the slots nothing
/// changes them: a subscribe from a callback is queued as work for after the walk, a dispose
/// is deferred to `removals` (the turn is held, by this thread up the stack), and the
/// terminal event's `removeAll` comes after. Debug builds check that. `removeAll` frees the
/// buffer; the subject's deinit calls it.
@usableFromInline
struct SubscriberList<Value, History: SubjectHistory> where History.Value == Value {
    @usableFromInline typealias Entry = SubjectSubscription<Value, History>
    @usableFromInline typealias Slot = Unmanaged<Entry>?

    /// `capacity` slots, the first `used` initialized (live entries and nil holes).
    @usableFromInline var base: UnsafeMutablePointer<Slot>?
    @usableFromInline var used = 0
    @usableFromInline var capacity = 0
    @usableFromInline var holes = 0
    #if DEBUG
    /// Walks in progress (`withSlots`): the list must not change meanwhile.
    @usableFromInline var walking = 0
    #endif

    @inlinable init() {}

    @inlinable var count: Int { used - holes }

    /// Runs `body` over the slots in subscription order (nil: a hole). `body` must not change
    /// the list (see the type's doc).
    @inlinable
    mutating func withSlots<R>(_ body: (UnsafeBufferPointer<Slot>) -> R) -> R {
        #if DEBUG
        walking += 1
        defer { walking -= 1 }
        #endif
        return body(UnsafeBufferPointer(start: base, count: used))
    }

    @inlinable
    func checkNotWalking() {
        #if DEBUG
        precondition(walking == 0, "Ripple: a subject's subscriber list changed while a delivery walked it")
        #endif
    }

    @inlinable
    mutating func append(_ entry: Entry) {
        checkNotWalking()
        precondition(used < Int(Int32.max), "Ripple: a subject's subscription list is full: its slots are 32-bit (2^31 - 1)")
        if used == capacity { reallocate(capacity: Swift.max(4, capacity &* 2)) }
        entry.slot = Int32(truncatingIfNeeded: used)
        (base.unsafelyUnwrapped + used).initialize(to: .passRetained(entry))
        used += 1
    }

    @inlinable
    mutating func remove(_ entry: Entry) {
        checkNotWalking()
        let slot = Int(entry.slot)
        guard slot >= 0, slot < used, let base,
              base[slot]?.toOpaque() == Unmanaged.passUnretained(entry).toOpaque() else { return }
        entry.slot = -1
        base[slot]?.release()  // the caller still holds `entry`: it cannot deinit here
        base[slot] = nil
        if slot == used - 1 {
            used -= 1
        } else {
            holes += 1
        }
        if holes >= 16 && holes * 2 >= used { compact() }
    }

    /// Empties the list, frees its buffer and hands back the entries, so the caller releases
    /// them after unlocking.
    @inlinable
    mutating func removeAll() -> [Entry] {
        checkNotWalking()
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        if let base {
            for index in 0..<used {
                if let unmanaged = base[index] {
                    let entry = unmanaged.takeRetainedValue()  // ownership moves to the caller
                    entry.slot = -1
                    entries.append(entry)
                }
            }
            base.deinitialize(count: used)
            base.deallocate()
        }
        base = nil
        used = 0
        capacity = 0
        holes = 0
        return entries
    }

    /// Moves the live entries down over the holes, in order; gives back memory when the list
    /// has shrunk to a quarter of its room.
    @inlinable
    mutating func compact() {
        guard let base else { return }
        var kept = 0
        for index in 0..<used {
            if let unmanaged = base[index] {
                unmanaged._withUnsafeGuaranteedRef { $0.slot = Int32(truncatingIfNeeded: kept) }
                base[kept] = unmanaged
                kept += 1
            }
        }
        (base + kept).update(repeating: nil, count: used - kept)
        used = kept
        holes = 0
        if capacity > 64 && used * 4 <= capacity { reallocate(capacity: Swift.max(4, used * 2)) }
    }

    /// Moves the `used` slots to a new buffer of `capacity` slots.
    @inlinable
    mutating func reallocate(capacity newCapacity: Int) {
        let newBase = UnsafeMutablePointer<Slot>.allocate(capacity: newCapacity)
        if let base {
            newBase.moveInitialize(from: base, count: used)
            base.deallocate()
        }
        base = newBase
        capacity = newCapacity
    }
}
