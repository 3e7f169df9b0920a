/// The pending actions of a `TestScheduler`, ordered by due time, then by scheduling order.
///
/// A binary min-heap: O(log n) insert and pop. Ripple keeps no package dependencies, so
/// swift-collections' `Heap` is not available, and a sorted array would make a million
/// pending timers quadratic.
struct VirtualTimeQueue {
    struct Item {
        let due: Duration
        let sequence: UInt64
        let action: ScheduledAction

        func precedes(_ other: Item) -> Bool {
            due != other.due ? due < other.due : sequence < other.sequence
        }
    }

    private var heap: [Item] = []

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    var first: Item? { heap.first }
    /// The items whose action was neither disposed nor taken to run.
    var liveCount: Int { heap.reduce(0) { $0 + ($1.action.isDisposed ? 0 : 1) } }

    mutating func insert(_ item: Item) {
        heap.append(item)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popFirst() -> Item? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let first = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].precedes(heap[smallest]) { smallest = left }
            if right < heap.count && heap[right].precedes(heap[smallest]) { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }
}
