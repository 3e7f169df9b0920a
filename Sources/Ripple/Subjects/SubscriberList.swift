/// A subject's subscriptions in subscription order, with O(1) add and remove.
///
/// Removal leaves a hole (the subscription knows its slot) and compaction runs once holes
/// outnumber live entries, so both stay O(1) amortized. A `Set` would lose the order and a
/// plain array would make removal a scan. Delivery takes `slots` as a copy-on-write
/// snapshot: no allocation, and the lock is not held while it is walked.
///
/// Slots hold `Unmanaged` references that the list owns (+1), so walking a snapshot copies
/// no references and retains nothing. That is safe because an entry leaves the list only
/// when no delivery walks a snapshot (or by the delivering thread itself, afterwards).
@usableFromInline
struct SubscriberList<Value, History: SubjectHistory> where History.Value == Value {
    @usableFromInline typealias Entry = SubjectSubscription<Value, History>

    @usableFromInline var slots: ContiguousArray<Unmanaged<Entry>?> = []
    @usableFromInline var holes = 0

    @inlinable init() {}

    @inlinable var count: Int { slots.count - holes }

    @inlinable
    mutating func append(_ entry: Entry) {
        entry.slot = slots.count
        slots.append(.passRetained(entry))
    }

    @inlinable
    mutating func remove(_ entry: Entry) {
        let slot = entry.slot
        guard slot >= 0, slot < slots.count, slots[slot]?.toOpaque() == Unmanaged.passUnretained(entry).toOpaque() else { return }
        entry.slot = -1
        slots[slot]?.release()  // the caller still holds `entry`: it cannot deinit here
        if slot == slots.count - 1 {
            slots.removeLast()
        } else {
            slots[slot] = nil
            holes += 1
        }
        if holes >= 16 && holes * 2 >= slots.count { compact() }
    }

    /// Empties the list and hands back the entries, so the caller releases them after unlocking.
    @inlinable
    mutating func removeAll() -> [Entry] {
        defer { slots = []; holes = 0 }
        var entries: [Entry] = []
        for case let unmanaged? in slots {
            let entry = unmanaged.takeRetainedValue()  // ownership moves to the caller
            entry.slot = -1
            entries.append(entry)
        }
        return entries
    }

    @inlinable
    mutating func compact() {
        var compacted = ContiguousArray<Unmanaged<Entry>?>()
        compacted.reserveCapacity(count)
        for case let unmanaged? in slots {
            unmanaged._withUnsafeGuaranteedRef { $0.slot = compacted.count }
            compacted.append(unmanaged)
        }
        slots = compacted
        holes = 0
    }
}
