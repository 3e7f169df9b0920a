import Testing
@testable import Ripple

/// `FIFOQueue`'s batch hand-off: what `deliver(on:)`'s drain relies on to reuse its buffers.
@Suite struct FIFOQueueTests {
    @Test func removingAllIntoABatchHandsOutTheQueuedValuesAndTheQueueGoesOnInTheBatchsStorage() {
        var queue = FIFOQueue<Int>()
        for i in 0..<5 { queue.append(i) }
        #expect(queue.popFirst() == 0)
        var batch = ContiguousArray<Int?>()
        batch.reserveCapacity(16)
        let spareCapacity = batch.capacity
        queue.removeAll(into: &batch, reusingUpTo: 64)
        #expect(batch == [nil, 1, 2, 3, 4])  // the popped prefix comes out as nil
        #expect(queue.isEmpty && queue.count == 0)
        #expect(queue.storage.capacity == spareCapacity)  // the next appends need no allocation
        queue.append(9)
        #expect(queue.popFirst() == 9)
    }

    @Test func aBatchLargerThanTheLimitIsNotKeptByTheQueue() {
        var queue = FIFOQueue<Int>()
        queue.append(1)
        var batch = ContiguousArray<Int?>()
        batch.reserveCapacity(1_000)
        queue.removeAll(into: &batch, reusingUpTo: 64)
        #expect(batch == [1])
        #expect(queue.storage.capacity == 0)
    }

    @Test func reuseGivesAQueueWithoutStorageTheEmptiedBatchAndLeavesAQueueWithStorageAlone() {
        var queue = FIFOQueue<Int>()
        var spare = ContiguousArray<Int?>()
        spare.reserveCapacity(8)
        let capacity = spare.capacity
        queue.reuse(&spare)
        #expect(queue.storage.capacity == capacity && spare.capacity == 0)

        queue.append(1)  // the queue has storage now: a second spare is left where it is
        var other = ContiguousArray<Int?>()
        other.reserveCapacity(8)
        queue.reuse(&other)
        #expect(other.capacity >= 8 && queue.count == 1 && queue.first == 1)

        var empty = FIFOQueue<Int>()
        var full: ContiguousArray<Int?> = [1]  // not empty: never taken, its values are not dropped
        empty.reuse(&full)
        #expect(full == [1] && empty.isEmpty)
    }
}
