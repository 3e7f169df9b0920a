import Synchronization
import Testing

@testable import RipplePostgres

/// A publisher lane's queue, without a database: how it batches, and what it releases where.
@Suite struct LaneTests {
    /// Counts releases, completions and the releases that ran while a lane call was under way
    /// (a stricter check than "under the lane's lock": the whole call is marked).
    final class Tally: Sendable {
        let inLaneCall = Atomic<Bool>(false)
        let released = Atomic<Int>(0)
        let releasedDuringLaneCall = Atomic<Int>(0)
        let releasedBeforeTheirCompletion = Atomic<Int>(0)
        let stopped = Atomic<Int>(0)

        /// Runs one call of the lane, marked.
        func laneCall<R>(_ body: () async -> R) async -> R {
            inLaneCall.store(true, ordering: .relaxed)
            defer { inLaneCall.store(false, ordering: .relaxed) }
            return await body()
        }
    }

    /// Stands for what a send's completion captures: the user's value, their `onError` closure.
    final class Captured: Sendable {
        let tally: Tally
        let completed = Atomic<Bool>(false)
        init(_ tally: Tally) { self.tally = tally }
        deinit {
            tally.released.add(1, ordering: .relaxed)
            if tally.inLaneCall.load(ordering: .relaxed) { tally.releasedDuringLaneCall.add(1, ordering: .relaxed) }
            if !completed.load(ordering: .relaxed) { tally.releasedBeforeTheirCompletion.add(1, ordering: .relaxed) }
        }
    }

    private static func item(_ json: String, _ tally: Tally) -> Publisher.Item {
        let captured = Captured(tally)
        return Publisher.Item(
            topic: "t", channel: "c", json: json, capacity: 10, maxAge: nil,
            completion: { result in
                if case .failure(PostgresReplayError.stopped) = result { tally.stopped.add(1, ordering: .relaxed) }
                captured.completed.store(true, ordering: .relaxed)
            })
    }

    private static func fill(_ lane: Lane, _ jsons: [String], _ tally: Tally) throws {
        for json in jsons { try lane.enqueue(item(json, tally), topic: "t", drain: {}) }
    }

    /// Takes a batch, runs its completions and drops it, as the drain does after a commit.
    private static func commitNext(_ lane: Lane, _ tally: Tally) async -> [String]? {
        guard let batch = await tally.laneCall({ lane.nextBatch() }) else { return nil }
        for item in batch { item.completion(.success(1)) }
        return batch.map(\.json)
    }

    @Test func batchesTakeTheQueueInOrderAtMostTheBatchLimitAtATime() async throws {
        let tally = Tally()
        let lane = Lane()
        let jsons = (0..<(Publisher.batchLimit + 500)).map { "\($0)" }
        try Self.fill(lane, jsons, tally)
        #expect(await Self.commitNext(lane, tally) == Array(jsons.prefix(Publisher.batchLimit)))
        #expect(await Self.commitNext(lane, tally) == Array(jsons.dropFirst(Publisher.batchLimit)))
        #expect(await Self.commitNext(lane, tally) == nil)
    }

    @Test func aBatchStopsAtTheByteLimitButAValueLargerThanItGoesAlone() async throws {
        let tally = Tally()
        let lane = Lane()
        let large = String(repeating: "x", count: Publisher.batchBytes * 3 / 4)
        try Self.fill(lane, [large, large, "1", "2", large], tally)
        #expect(await Self.commitNext(lane, tally)?.count == 1)
        #expect(await Self.commitNext(lane, tally) == [large, "1", "2"])
        #expect(await Self.commitNext(lane, tally)?.count == 1)
        #expect(await Self.commitNext(lane, tally) == nil)
    }

    @Test func itemsOfACommittedBatchAreReleasedWithTheBatchNeverDuringALaneCall() async throws {
        let tally = Tally()
        let lane = Lane()
        // More than one batch, and more than the storage the lane keeps after a burst (4,096):
        // each take leaves a remainder behind it, and the last one frees the burst's storage.
        let count = 3 * Publisher.batchLimit + 2_000
        try Self.fill(lane, (0..<count).map { "\($0)" }, tally)
        var committed = 0
        while let batch = await Self.commitNext(lane, tally) {
            committed += batch.count
            #expect(tally.released.load(ordering: .relaxed) == committed)  // the batch, and only it
        }
        #expect(committed == count)
        #expect(tally.releasedDuringLaneCall.load(ordering: .relaxed) == 0)
        #expect(tally.releasedBeforeTheirCompletion.load(ordering: .relaxed) == 0)
    }

    @Test func closeFailsWhatIsQueuedWithStoppedThenReleasesItAndRefusesNewItems() async throws {
        let tally = Tally()
        let lane = Lane()
        try Self.fill(lane, (0..<(Publisher.batchLimit + 500)).map { "\($0)" }, tally)
        _ = await Self.commitNext(lane, tally)
        #expect(tally.released.load(ordering: .relaxed) == Publisher.batchLimit)
        await lane.close()
        #expect(tally.stopped.load(ordering: .relaxed) == 500)
        #expect(tally.released.load(ordering: .relaxed) == Publisher.batchLimit + 500)
        #expect(tally.releasedBeforeTheirCompletion.load(ordering: .relaxed) == 0)
        #expect(throws: PostgresReplayError.self) { try Self.fill(lane, ["late"], tally) }
        #expect(tally.stopped.load(ordering: .relaxed) == 500)  // a refused item's completion is not called
    }
}
