/// A first-in, first-out queue with O(1) amortized `append` and `popFirst`.
///
/// Ripple keeps no package dependencies, so swift-collections' `Deque` is not available;
/// `Array.removeFirst()` is O(n). This queue keeps a head index into an array and
/// compacts once the consumed prefix outweighs the rest. An empty queue allocates nothing,
/// which keeps the uncontended send path allocation-free.
@usableFromInline
struct FIFOQueue<Element> {
    @usableFromInline var storage: ContiguousArray<Element?> = []
    @usableFromInline var head = 0

    @inlinable init() {}

    @inlinable var isEmpty: Bool { head == storage.count }
    @inlinable var count: Int { storage.count - head }

    /// The next element `popFirst` returns.
    @inlinable var first: Element? { head < storage.count ? storage[head] : nil }
    /// The element appended last, if still queued.
    @inlinable var last: Element? { head < storage.count ? storage[storage.count - 1] : nil }

    /// Whether some queued element satisfies `predicate`.
    @inlinable
    func contains(where predicate: (Element) -> Bool) -> Bool {
        for index in head..<storage.count where predicate(storage[index].unsafelyUnwrapped) { return true }
        return false
    }

    @inlinable
    mutating func append(_ element: Element) {
        storage.append(element)
    }

    @inlinable
    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head].take()
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 32 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Empties the queue and hands back what it held, so the caller can release it
    /// after unlocking.
    @inlinable
    mutating func removeAll() -> ContiguousArray<Element?> {
        defer { storage = []; head = 0 }
        return storage
    }

    /// Empties the queue into `batch` (which must be empty), handing back what it held, and
    /// goes on in `batch`'s old storage — its capacity kept, unless above `limit` — so a
    /// consumer that hands back each emptied batch reuses its buffers instead of allocating
    /// one per batch. Elements before `head` come out as `nil`, as with `removeAll()`.
    @inlinable
    mutating func removeAll(into batch: inout ContiguousArray<Element?>, reusingUpTo limit: Int) {
        precondition(batch.isEmpty, "FIFOQueue.removeAll(into:) needs an empty batch")
        if batch.capacity > limit { batch = [] }  // an empty array: nothing to deinitialize
        swap(&storage, &batch)
        head = 0
    }

    /// Lets a queue with no storage (after `removeAll()`, or in a fresh queue) go on in
    /// `spare`'s — an emptied batch, its capacity kept — so its next appends allocate nothing;
    /// `spare` gets the queue's empty array. Does nothing if the queue has storage or `spare`
    /// is not empty.
    @inlinable
    mutating func reuse(_ spare: inout ContiguousArray<Element?>) {
        guard storage.capacity == 0, spare.isEmpty else { return }
        swap(&storage, &spare)
        head = 0
    }
}

extension FIFOQueue: Sendable where Element: Sendable {}
