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
}

extension FIFOQueue: Sendable where Element: Sendable {}
