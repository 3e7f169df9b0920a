import Synchronization
import Testing

@testable import RipplePostgres

/// A publisher lane's queue, without a database: what it releases, and where.
@Suite struct LaneTests {
    /// Counts releases, and those that ran while a lane call was under way (under its lock).
    final class Releases: Sendable {
        let inLaneCall = Atomic<Bool>(false)
        let total = Atomic<Int>(0)
        let duringLaneCall = Atomic<Int>(0)

        /// Runs one call of the lane, marked.
        func laneCall<R>(_ body: () -> R) -> R {
            inLaneCall.store(true, ordering: .relaxed)
            defer { inLaneCall.store(false, ordering: .relaxed) }
            return body()
        }
    }

    /// Stands for what a send's completion captures: the user's value, their `onError` closure.
    final class Captured: Sendable {
        let releases: Releases
        init(_ releases: Releases) { self.releases = releases }
        deinit {
            releases.total.add(1, ordering: .relaxed)
            if releases.inLaneCall.load(ordering: .relaxed) { releases.duringLaneCall.add(1, ordering: .relaxed) }
        }
    }

    private static func item(_ index: Int, capturing captured: Captured) -> Publisher.Item {
        Publisher.Item(
            topic: "t", channel: "c", json: "\(index)", capacity: 10, maxAge: nil,
            completion: { _ in withExtendedLifetime(captured) {} })
    }

    private static func fill(_ lane: Lane, _ count: Int, _ releases: Releases) throws {
        for index in 0..<count {
            try lane.enqueue(item(index, capturing: Captured(releases)), topic: "t", drain: {})
        }
    }

    @Test func itemsOfACommittedBatchAreReleasedByTheirBatchNotUnderTheLanesLock() throws {
        let releases = Releases()
        let lane = Lane()
        // More than one batch: the first batch leaves a remainder behind it in the queue.
        try Self.fill(lane, Publisher.batchLimit + 500, releases)
        var batch = releases.laneCall { lane.nextBatch() }
        #expect(batch?.count == Publisher.batchLimit)
        batch = nil  // committed: its completions ran, the drain lets it go
        #expect(releases.total.load(ordering: .relaxed) == Publisher.batchLimit)
        batch = releases.laneCall { lane.nextBatch() }
        #expect(batch?.count == 500)
        batch = nil
        #expect(releases.laneCall { lane.nextBatch() } == nil)
        #expect(releases.total.load(ordering: .relaxed) == Publisher.batchLimit + 500)
        #expect(releases.duringLaneCall.load(ordering: .relaxed) == 0)
    }

    @Test func aTakenBatchIsNotKeptAliveByTheQueueUntilCloseReleasesIt() async throws {
        let releases = Releases()
        let lane = Lane()
        try Self.fill(lane, Publisher.batchLimit + 500, releases)
        var batch = releases.laneCall { lane.nextBatch() }
        #expect(batch?.count == Publisher.batchLimit)
        batch = nil
        #expect(releases.total.load(ordering: .relaxed) == Publisher.batchLimit)
        await lane.close()  // fails the 500 still queued: completions first, then releases
        #expect(releases.total.load(ordering: .relaxed) == Publisher.batchLimit + 500)
        #expect(throws: PostgresReplayError.self) { try Self.fill(lane, 1, releases) }
    }
}
