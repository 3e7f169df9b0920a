/// A bounded FIFO that overwrites its oldest element when full: the storage behind `ReplaySubject`.
///
/// O(1) amortized `append` and `removeFirst`. Memory follows what is held, not the
/// capacity: slots grow by doubling up to `capacity` and shrink when mostly empty, so a
/// ring with a capacity of a billion holding one value uses a few words. Ripple keeps no
/// package dependencies, and swift-collections' `Deque` neither bounds nor overwrites.
@usableFromInline
struct RingBuffer<Element> {
    /// The most elements held; appending beyond it drops the oldest.
    @usableFromInline let capacity: Int
    @usableFromInline var slots: ContiguousArray<Element?> = []
    @usableFromInline var head = 0
    @usableFromInline var count = 0

    @inlinable
    init(capacity: Int) {
        precondition(capacity >= 1, "RingBuffer capacity must be at least 1, got \(capacity)")
        self.capacity = capacity
    }

    @inlinable var isEmpty: Bool { count == 0 }

    /// The slots allocated now (for tests of the memory bound).
    @inlinable var allocatedSlots: Int { slots.count }

    /// The oldest element, or nil.
    @inlinable var first: Element? { count == 0 ? nil : slots[head] }

    /// Appends `element`; when `count == capacity`, the oldest element is dropped and returned.
    @inlinable @discardableResult
    mutating func append(_ element: Element) -> Element? {
        if count == capacity {
            let dropped = slots[head]
            slots[head] = element
            head = (head + 1) % slots.count
            return dropped
        }
        if count == slots.count { resize(to: Swift.min(capacity, Swift.max(4, slots.count &* 2))) }
        slots[(head + count) % slots.count] = element
        count += 1
        return nil
    }

    /// Removes and returns the oldest element.
    @inlinable @discardableResult
    mutating func removeFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = slots[head].take()
        head = (head + 1) % slots.count
        count -= 1
        if count == 0 {
            slots = []
            head = 0
        } else if slots.count > 16 && count < slots.count / 4 {
            resize(to: slots.count / 2)
        }
        return element
    }

    /// The elements, oldest first.
    /// Calls `body` with the elements' slots in order, oldest first, as the (at most two)
    /// contiguous runs of the ring: no division per element, no copy of the storage.
    @inlinable
    func withRuns<R>(_ body: (UnsafeBufferPointer<Element?>, UnsafeBufferPointer<Element?>) -> R) -> R {
        slots.withUnsafeBufferPointer { all in
            guard count > 0, let base = all.baseAddress else { return body(.init(start: nil, count: 0), .init(start: nil, count: 0)) }
            let firstRun = Swift.min(count, all.count - head)
            return body(UnsafeBufferPointer(start: base + head, count: firstRun),
                        UnsafeBufferPointer(start: base, count: count - firstRun))
        }
    }

    @inlinable var elements: [Element] {
        var result: [Element] = []
        result.reserveCapacity(count)
        for offset in 0..<count { result.append(slots[(head + offset) % slots.count].unsafelyUnwrapped) }
        return result
    }

    @inlinable mutating func resize(to newSize: Int) {
        var resized = ContiguousArray<Element?>(repeating: nil, count: newSize)
        for offset in 0..<count { resized[offset] = slots[(head + offset) % slots.count] }
        slots = resized
        head = 0
    }
}

/// A ring of `Sendable` elements is `Sendable`: its fields are a capacity, indices and an array of them.
extension RingBuffer: Sendable where Element: Sendable {}
