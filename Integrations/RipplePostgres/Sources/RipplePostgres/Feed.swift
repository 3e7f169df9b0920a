import Foundation
import Logging
import PostgresNIO
import Ripple
import struct NIOConcurrencyHelpers.NIOLockedValueBox
import Synchronization

/// One subject as `PostgresTopics`' listener sees it, without its value type: a topic to read
/// when hinted, and subscribers to end.
protocol TopicReader: AnyObject, Sendable {
    /// The topic.
    var topic: String { get }
    /// Its NOTIFY channel.
    var channel: String { get }
    /// The cursor it starts from (`resumingAfter:`), nil for a new instance.
    var startCursor: Int64? { get }
    /// Tells the subject's `connectionState`.
    func setState(_ state: ConnectionState)
    /// Reads what the table holds after the cursor (the retained tail the first time) and
    /// delivers it; returns the new cursor. Throws `missedValues`/`cursorAhead` to end this
    /// subject, anything else for the connection.
    func read(on connection: GuardedConnection) async throws -> Int64?
    /// Delivers signed batches (checked against the key) that follow the cursor; one that does
    /// not, does not decode, or is not fresh, is read from the table instead. Counts both in
    /// `counts` as it goes (so they are counted even when it throws); returns the new cursor;
    /// throws as `read` does.
    func deliver(_ batches: [SignedValues], on connection: GuardedConnection, counting counts: DeliveryCounts) async throws -> Int64?
    /// Records the database's time, read just now (the heartbeat's).
    func synchronize(databaseEpoch: Double)
    /// Ends the subscribers once: `completed` without `failure`, else the error.
    func finish(_ failure: (any Error)?)
}

/// The listener's half of a `PostgresReplaySubject`: the local replay buffer, the cursor, the
/// state signals, and the reads that feed them. Only `PostgresTopics`' reader task calls `read`,
/// one at a time.
final class Feed<Value: Codable & Sendable>: TopicReader {
    let topic: String
    let channel: String
    let startCursor: Int64?
    let capacity: Int
    let maxAge: Duration?
    let onMissedValues: MissedValuesPolicy
    let logger: Logger
    let local: ReplaySubject<Value>
    let state = BehaviorSubject<ConnectionState>(.idle)
    let missed = Subject<MissedValues>()
    /// The last delivered sequence, -1 before the first.
    let delivered: Atomic<Int64>
    /// Resolved when the subscribers are ended.
    let ending = Ending()
    private let clock = DatabaseClock()
    /// Read and written by the one reader task only; a `NIOLockedValueBox` for `Sendable`, never contended.
    private let cursor: NIOLockedValueBox<FeedCursor>
    private let finished = Atomic<Bool>(false)

    init(topic: String, channel: String, capacity: Int, maxAge: Duration?, resumingAfter: Int64?,
         onMissedValues: MissedValuesPolicy, logger: Logger) {
        self.topic = topic
        self.channel = channel
        self.startCursor = resumingAfter
        self.capacity = capacity
        self.maxAge = maxAge
        self.onMissedValues = onMissedValues
        self.logger = logger
        if let maxAge {
            local = ReplaySubject(capacity: capacity, maxAge: maxAge, scheduler: clock)
        } else {
            local = ReplaySubject(capacity: capacity)
        }
        delivered = Atomic(resumingAfter ?? -1)
        cursor = NIOLockedValueBox(FeedCursor(resumingAfter: resumingAfter))
    }

    func setState(_ state: ConnectionState) {
        if !finished.load(ordering: .acquiring) { self.state.sendNext(state) }
    }

    func finish(_ failure: (any Error)?) {
        guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if let failure { local.sendError(failure) } else { local.sendCompleted() }
        logger.debug("stopped", metadata: failure.map { ["error": "\(Untrusted.describe($0))"] })
        state.sendNext(.stopped)
        state.sendCompleted()
        missed.sendCompleted()
        ending.resolve(failure)
    }

    func read(on connection: GuardedConnection) async throws -> Int64? {
        var cursor = self.cursor.withLockedValue { $0 }
        defer { self.cursor.withLockedValue { [cursor] in $0 = cursor } }
        if cursor.last == nil {
            try await readTail(&cursor, on: connection)
        } else {
            try await readAfter(&cursor, on: connection)
        }
        return cursor.last
    }

    func deliver(_ batches: [SignedValues], on connection: GuardedConnection, counting counts: DeliveryCounts) async throws -> Int64? {
        var cursor = self.cursor.withLockedValue { $0 }
        defer { self.cursor.withLockedValue { [cursor] in $0 = cursor } }
        for batch in batches {
            if let last = cursor.last, batch.last <= last { continue }  // a read already delivered it
            if isFresh(batch), let values = decode(batch), cursor.accept(batchFrom: batch.first, count: values.count) {
                for (offset, value) in values.enumerated() {
                    send(value, sequence: batch.first + Int64(offset), epoch: batch.epoch)
                }
                counts.signed += 1
            } else {
                // A gap, a batch that does not decode, or an old one (replayed, or held up):
                // the table has what to deliver.
                counts.reads += 1
                if cursor.last == nil { try await readTail(&cursor, on: connection) } else { try await readAfter(&cursor, on: connection) }
            }
        }
        return cursor.last
    }

    func synchronize(databaseEpoch: Double) {
        clock.synchronize(databaseEpoch: databaseEpoch)
    }

    /// How old a signed batch may be, on the database's clock, to be delivered from its
    /// notification: a minute. An older one — a notification captured and sent again after the
    /// topic's sequences were given out again (a reset, a restore), or one that waited in a
    /// backlog — is read from the table instead, as without a key (with `maxAge`, that read can
    /// report values older than `maxAge` as missed, as a read of a listener held up does). A
    /// batch older than `maxAge` but within the minute is delivered, stamped with its time: the
    /// local buffer's `maxAge` keeps it from late subscribers.
    static var signedFreshness: Double { 60 }

    /// Whether `batch` was committed within `signedFreshness` of the database's time now (and
    /// not later than a second from now).
    private func isFresh(_ batch: SignedValues) -> Bool {
        let now = clock.databaseEpoch
        return batch.epoch >= now - Self.signedFreshness && batch.epoch <= now + 1
    }

    /// A signed batch's values, if its body is a JSON array of exactly its count of `Value`s.
    private func decode(_ batch: SignedValues) -> [Value]? {
        guard let values = try? JSONDecoder().decode([Value].self, from: Data(batch.body.utf8)),
              Int64(values.count) == batch.last - batch.first + 1 else { return nil }
        return values
    }

    /// A new instance's first read: the retained tail, with the head, in one snapshot.
    private func readTail(_ cursor: inout FeedCursor, on connection: GuardedConnection) async throws {
        var head: Int64 = 0
        var tail: [(sequence: Int64, epoch: Double, json: String)] = []
        let rows = try await connection.query(Schema.tail(topic: topic, limit: capacity, maxAge: maxAge), logger: logger)
        for try await row in rows {
            let (rowHead, now, sequence, epoch, json) = try row.decode((Int64, Double, Int64?, Double?, String?).self)
            head = rowHead
            clock.synchronize(databaseEpoch: now)
            if let sequence, let epoch, let json { tail.append((sequence, epoch, json)) }
        }
        tail.reverse()
        cursor.start(head: head, tail: tail.map(\.sequence))
        for row in tail { try deliver(row.sequence, row.epoch, row.json) }
        if tail.isEmpty { delivered.store(head, ordering: .releasing) }
    }

    /// Reads the values after the cursor, in batches, reporting the ones retention trimmed.
    private func readAfter(_ cursor: inout FeedCursor, on connection: GuardedConnection) async throws {
        let batch = 500, bytes = 1 << 20  // a page: at most 500 values and about 1 MB of JSON
        while true {
            var head: Int64 = 0
            var rows: [(sequence: Int64, epoch: Double, json: String)] = []
            let after = cursor.last ?? 0
            for try await row in try await connection.query(
                Schema.after(topic: topic, sequence: after, limit: batch, bytes: bytes, maxAge: maxAge), logger: logger)
            {
                let (rowHead, now, sequence, epoch, json) = try row.decode((Int64, Double, Int64?, Double?, String?).self)
                head = rowHead
                clock.synchronize(databaseEpoch: now)
                if let sequence, let epoch, let json { rows.append((sequence, epoch, json)) }
            }
            for step in cursor.accept(rows: rows.map(\.sequence), headBefore: head) {
                switch step {
                case .deliver(let index):
                    try deliver(rows[index].sequence, rows[index].epoch, rows[index].json)
                case .missed(let gap):
                    delivered.store(gap.sequences.upperBound, ordering: .releasing)
                    try report(MissedValues(topic: topic, sequences: gap.sequences, reason: .trimmed))
                case .cursorAhead(let head):
                    let error = PostgresReplayError.cursorAhead(topic: topic, cursor: after, head: head)
                    logger.error("the cursor is ahead of the topic", metadata: ["error": "\(error)"])
                    throw error
                }
            }
            // A page that stopped at neither bound was the last one.
            if rows.count < batch, rows.reduce(0, { $0 + $1.json.utf8.count }) < bytes { return }
        }
    }

    /// Decodes and sends one committed value to the local subscribers, stamped with its
    /// publishing time (clamped: never in the future, never a time `Duration` cannot hold).
    private func deliver(_ sequence: Int64, _ epoch: Double, _ json: String) throws {
        let value: Value
        do {
            value = try JSONDecoder().decode(Value.self, from: Data(json.utf8))
        } catch {
            delivered.store(sequence, ordering: .releasing)
            return try report(MissedValues(topic: topic, sequences: sequence...sequence, reason: .undecodable("\(error)")))
        }
        send(value, sequence: sequence, epoch: epoch)
    }

    /// Sends one committed value to the local subscribers, stamped with its publishing time.
    private func send(_ value: Value, sequence: Int64, epoch: Double) {
        delivered.store(sequence, ordering: .releasing)
        DatabaseClock.stamping(clock.clamped(epoch)) { local.sendNext(value) }
    }

    /// Says that committed values will never be delivered, as the policy asks.
    private func report(_ gap: MissedValues) throws {
        logger.warning("missed values", metadata: ["ripple.missed": "\(Untrusted.escaped(gap.description, limit: 300))"])
        switch onMissedValues {
        case .skip:
            missed.sendNext(gap)
        case .fail:
            throw PostgresReplayError.missedValues(gap)
        }
    }
}

/// How a `deliver` of signed batches went: batches delivered from their notification, and reads
/// made instead.
final class DeliveryCounts: @unchecked Sendable {  // made, written and read by the one reader task, one deliver at a time
    var signed = 0
    var reads = 0
}

/// A one-time outcome to wait for: resolved once, with an error or none.
final class Ending: Sendable {
    private struct State {
        var outcome: Result<Void, any Error>?
        var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        var next = 0
    }
    private let state = NIOLockedValueBox(State())

    /// Resolves the outcome (the first call wins) and resumes every waiter.
    func resolve(_ failure: (any Error)?) {
        let outcome: Result<Void, any Error> = failure.map { .failure($0) } ?? .success(())
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Void, any Error>] in
            guard state.outcome == nil else { return [] }
            state.outcome = outcome
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: outcome) }
    }

    /// Waits for the outcome: returns, or throws its error; throws `CancellationError` when the
    /// waiting task is cancelled first.
    func wait() async throws {
        let id = state.withLockedValue { state in
            state.next += 1
            return state.next
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resume: Result<Void, any Error>? = state.withLockedValue { state in
                    if let outcome = state.outcome { return outcome }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            let waiter = state.withLockedValue { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(throwing: CancellationError())
        }
    }
}
