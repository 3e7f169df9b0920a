import Logging
import PostgresNIO
import struct NIOConcurrencyHelpers.NIOLockedValueBox
import struct NIOCore.CircularBuffer
import Synchronization

/// Writes values to topics for one process: a small, bounded set of connections ("lanes"), a
/// first-in first-out queue per lane, and group commit.
///
/// - **Order**: `enqueue` (and so `publish`) appends to its lane's queue synchronously, under a
///   lock, before anything awaits; a topic always maps to the same lane, and one task per lane
///   commits the queue in order. So the values of one topic commit in the order the calls
///   reached `enqueue`.
/// - **Group commit**: the lane's task takes everything queued (up to `batchLimit` values,
///   `batchBytes` bytes) into one transaction: one statement per topic (`head = head + n`, one
///   `INSERT … SELECT … unnest`), topics sorted within the transaction so that two processes
///   always lock topic rows in the same order and cannot deadlock, one `pg_notify` per topic whose
///   payload is the last sequence committed to it (with a `NotificationKey`, followed by the
///   batch, signed). A failed transaction fails exactly its sends.
/// - **Durability**: lane connections start with `synchronous_commit=on`, so a value is on the
///   server's disk (or its synchronous standby) before its send returns, whatever the server's
///   or the role's default.
/// - **Connections**: at most `maxConnections`, one per lane, each opened when its lane first has
///   work and kept; replaced after it fails. Nothing runs while the queues are empty.
///
/// Not postgres-nio's `PostgresClient`: it needs its own TLS configuration type (a
/// `PostgresConnection.Configuration`'s `NIOSSLContext` cannot be turned into one), and a lane
/// needs the same connection for each of its batches anyway (see the package README).
final class Publisher: Sendable {
    /// The most values one transaction takes.
    static let batchLimit = 1_000
    /// The most bytes of JSON one transaction takes (a single larger value still goes, alone).
    static let batchBytes = 4 << 20

    /// One value waiting to be committed, and who wants to know the outcome.
    struct Item: Sendable {
        var topic: String
        var channel: String
        var json: String
        var capacity: Int
        var maxAge: Duration?
        /// Called once, with the value's sequence or the error, with no lock held: on the lane's
        /// task, or on the task calling `close()` for an item still queued then.
        var completion: @Sendable (Result<Int64, any Error>) -> Void
    }

    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let lanes: [Lane]
    /// Whether the schema was checked (`Schema.prepare`): once per publisher, not per connection.
    private let schemaReady = NIOLockedValueBox(false)
    /// Whether a missing table may be created (`PostgresTopics.SchemaPolicy.createIfMissing`).
    private let createsSchema: Bool
    /// Signs each topic's notification and puts the batch in it (see `NotificationKey`).
    private let notificationKey: NotificationKey?
    /// How long a batch waits for its answer (a half-open connection never answers, and TCP takes
    /// about 15 minutes to notice): then the connection is closed and the batch fails.
    private let commitTimeout: Duration

    /// A publisher of at most `maxConnections` connections (opened as lanes get work).
    /// - Precondition: `maxConnections` is at least 1.
    init(configuration: PostgresConnection.Configuration, logger: Logger, maxConnections: Int = 2, createsSchema: Bool = true,
         notificationKey: NotificationKey? = nil, commitTimeout: Duration = Publisher.defaultCommitTimeout) {
        precondition(maxConnections >= 1, "Publisher needs at least one connection, got \(maxConnections)")
        var configuration = configuration
        // Durable before `send` returns, whatever the server's (or the role's) synchronous_commit:
        // a startup parameter outranks postgresql.conf, ALTER SYSTEM, ALTER DATABASE and ALTER ROLE.
        // A stronger setting the caller asked for (remote_write, remote_apply) is kept.
        let asked = configuration.options.additionalStartupParameters.last { $0.0 == "synchronous_commit" }?.1
        if !["on", "remote_write", "remote_apply"].contains(asked ?? "") {
            configuration.options.additionalStartupParameters.removeAll { $0.0 == "synchronous_commit" }
            configuration.options.additionalStartupParameters.append(("synchronous_commit", "on"))
        }
        // A lane cut off inside a multi-topic BEGIN…COMMIT must not keep topic rows locked for
        // every other instance: the server ends such a session after a minute.
        if !configuration.options.additionalStartupParameters.contains(where: { $0.0 == "idle_in_transaction_session_timeout" }) {
            configuration.options.additionalStartupParameters.append(("idle_in_transaction_session_timeout", "60s"))
        }
        self.configuration = configuration
        self.logger = logger
        self.lanes = (0..<maxConnections).map { _ in Lane() }
        self.createsSchema = createsSchema
        self.notificationKey = notificationKey
        self.commitTimeout = commitTimeout
    }

    /// How long a batch may wait for the database's answer before its connection is closed.
    static let defaultCommitTimeout = Duration.seconds(30)

    /// A batch still unanswered after `commitTimeout`: the connection was closed, the batch's
    /// sends fail with this, and whether they were committed is unknown.
    struct CommitTimedOut: Error, CustomStringConvertible {
        var timeout: Duration
        var description: String {
            "the database did not answer within \(timeout): the connection was closed; whether the values were committed is unknown"
        }
    }

    /// Commits `json` to `topic`; returns its sequence.
    ///
    /// Queued before this function first suspends, so one caller's publishes to a topic commit in
    /// the order of the calls. Not withdrawn when the calling task is cancelled: it was handed over.
    /// - Throws: `PostgresReplayError.stopped` after `close()`; the database's error if the
    ///   transaction failed (if the connection failed during the commit, whether the value was
    ///   committed is unknown).
    func publish(topic: String, channel: String, json: String, capacity: Int, maxAge: Duration?) async throws -> Int64 {
        let outcome = Outcome()
        try enqueue(Item(topic: topic, channel: channel, json: json, capacity: capacity, maxAge: maxAge, completion: { outcome.complete($0) }))
        return try await outcome.value
    }

    /// Queues `item` at the end of its topic's lane, synchronously; its completion is called once
    /// it is committed or failed.
    /// - Throws: `PostgresReplayError.stopped` after `close()` (the completion is not called then).
    func enqueue(_ item: Item) throws {
        let lane = lanes[Self.lane(of: item.topic, among: lanes.count)]
        try lane.enqueue(item, topic: item.topic) { [self] in await drain(lane) }
    }

    /// Ends the publisher: fails what is still queued with `stopped`, waits for the transactions
    /// in flight (their sends get their outcome), closes every connection. Later publishes throw
    /// `PostgresReplayError.stopped`.
    func close() async {
        for lane in lanes { await lane.close() }
    }

    /// The lane of `topic`: a hash of its bytes (FNV-1a), so a topic always has the same one.
    static func lane(of topic: String, among count: Int) -> Int {
        Int(PostgresReplaySubject<Int>.topicHash(topic) % UInt64(count))
    }

    /// The lane's task: commits batch after batch until its queue is empty.
    private func drain(_ lane: Lane) async {
        while let batch = lane.nextBatch() {
            let outcome: Result<[Int64], any Error>
            do {
                let connection = try await lane.connection { [self] in try await open() }
                do {
                    // Guarded: a statement written as the connection closes would never fail; and
                    // bounded: a connection that stopped answering is closed.
                    outcome = .success(try await bounded(on: connection) { [self] in
                        try await connection.run { [self] in try await commit(batch, on: $0) }
                    })
                } catch let error as PSQLError where error.serverInfo == nil {
                    await lane.discard(connection)  // the connection failed, not the statement
                    throw error
                } catch let error as GuardedConnection.Closed {
                    await lane.discard(connection)
                    throw error
                } catch let error as CommitTimedOut {
                    await lane.discard(connection)
                    throw error
                }
            } catch {
                outcome = .failure(error)
            }
            switch outcome {
            case .success(let sequences):
                for (item, sequence) in zip(batch, sequences) { item.completion(.success(sequence)) }
            case .failure(let error):
                for item in batch { item.completion(.failure(error)) }
            }
            // The senders just resumed usually send again at once: let them queue, so the next
            // transaction takes all of them instead of the first one alone.
            await Task.yield()
        }
    }

    /// Runs `work`, closing `connection` if it takes longer than `commitTimeout` (the work then
    /// fails as the connection closes, and this throws `CommitTimedOut`).
    private func bounded<T: Sendable>(on connection: GuardedConnection, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let timedOut = Flag()
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await work() }
            group.addTask { [commitTimeout] in
                try? await Task.sleep(for: commitTimeout)
                if Task.isCancelled { return nil }
                timedOut.set()
                try? await connection.connection.close()
                return nil
            }
            defer { group.cancelAll() }
            do {
                while let result = try await group.next() {
                    if let value = result { return value }
                }
            } catch {
                if timedOut.isSet { throw CommitTimedOut(timeout: commitTimeout) }
                throw error
            }
            throw CommitTimedOut(timeout: commitTimeout)
        }
    }

    /// A new lane connection, the tables ensured once per publisher.
    private func open() async throws -> GuardedConnection {
        let connection = GuardedConnection(try await Connections.open(configuration, logger: logger))
        do {
            try await connection.run { [self] in try await prepareSchemaOnce(on: $0) }
        } catch {
            try? await connection.connection.close()
            throw error
        }
        return connection
    }

    /// The one place the publisher prepares the schema: once per publisher, on its first connection.
    private func prepareSchemaOnce(on connection: PostgresConnection) async throws {
        if schemaReady.withLockedValue({ $0 }) { return }
        try await Schema.prepare(on: connection, createIfMissing: createsSchema, logger: logger)
        schemaReady.withLockedValue { $0 = true }
    }

    /// Commits `batch` in one transaction; returns each item's sequence, in the batch's order.
    private func commit(_ batch: [Item], on connection: PostgresConnection) async throws -> [Int64] {
        // Per topic, in call order; topics sorted, so every process locks topic rows in one order.
        // Keyed by the topic's bytes, as PostgreSQL compares them: Swift's `String` equality is
        // canonical equivalence, which would make "caf\u{e9}" and "cafe\u{301}" one topic here
        // and two in the table.
        var positions: [[UInt8]: [Int]] = [:]
        for (index, item) in batch.enumerated() { positions[Array(item.topic.utf8), default: []].append(index) }
        let topics = positions.keys.sorted { $0.lexicographicallyPrecedes($1) }
        var sequences = [Int64](repeating: 0, count: batch.count)
        func publish(_ key: [UInt8]) async throws {
            let indices = positions[key]!
            let last = batch[indices.last!]
            let topic = last.topic
            var head: Int64?
            for try await row in try await connection.execute(
                Schema.Publish(topic: topic, channel: last.channel, values: indices.map { batch[$0].json },
                               capacity: last.capacity, maxAge: last.maxAge, key: notificationKey),
                logger: logger)
            {
                head = row
            }
            guard let head else { throw PostgresReplayError.malformed("publishing to \(topic) returned no sequence") }
            for (offset, index) in indices.enumerated() {
                // Wrapping: the head comes from the table, which a role that may write it could
                // set anywhere; a nonsense head gives nonsense sequences, never a trap.
                sequences[index] = head &- Int64(indices.count) &+ 1 &+ Int64(offset)
            }
        }
        if topics.count == 1 {
            // One statement, one implicit transaction, which PostgreSQL commits at the protocol's
            // Sync, after the statement's CommandComplete; postgres-nio reports the statement
            // done at CommandComplete, and an error at commit (a deferred constraint, a full
            // notification queue, a serialization failure) then closes the connection instead
            // of failing the statement. So a second statement confirms the commit: it runs only
            // after the Sync's answer, and fails if the connection closed. Two round trips,
            // where BEGIN … COMMIT would take three.
            try await publish(topics[0])
            try await connection.query("SELECT 1", logger: logger)
        } else {
            try await connection.query("BEGIN", logger: logger)
            do {
                for topic in topics { try await publish(topic) }
                try await connection.query("COMMIT", logger: logger)
            } catch {
                if !connection.isClosed { _ = try? await connection.query("ROLLBACK", logger: logger) }
                throw error
            }
        }
        return sequences
    }
}

/// One connection of a `Publisher` and the queue it commits.
///
/// An item leaves the queue when its batch is taken (NIO's `CircularBuffer`: O(1) at both ends),
/// so the lane keeps no reference to a taken item. What a completion captures — for
/// `sendingSubscriber(onError:)`, the user's value and `onError` closure, whose `deinit`s are user
/// code and may send again — is released by whichever task drops the batch last (the drain after
/// its completions, or the commit's query task), never under this lock.
final class Lane: Sendable {
    private struct State {
        var queue = CircularBuffer<Publisher.Item>()
        /// The task committing the queue, while there is one.
        var draining: Task<Void, Never>?
        var connection: GuardedConnection?
        var closed = false
    }
    private let state = NIOLockedValueBox(State())

    /// Appends `item`; starts the lane's task (`drain`) if none runs. Never calls user code.
    func enqueue(_ item: Publisher.Item, topic: String, drain: @escaping @Sendable () async -> Void) throws {
        try state.withLockedValue { state in
            if state.closed { throw PostgresReplayError.stopped(topic: topic) }
            state.queue.append(item)
            // Created under the lock (creating a task runs nothing), so `draining` is always the
            // task that will see this item.
            if state.draining == nil { state.draining = Task { await drain() } }
        }
    }

    /// The next batch (everything queued, within the limits), or nil — and then the task ends.
    func nextBatch() -> [Publisher.Item]? {
        state.withLockedValue { state in
            if state.queue.isEmpty || state.closed {
                state.draining = nil
                return nil
            }
            var batch: [Publisher.Item] = []
            batch.reserveCapacity(min(state.queue.count, Publisher.batchLimit))
            var bytes = 0
            while batch.count < Publisher.batchLimit, !state.queue.isEmpty {
                bytes += state.queue[state.queue.startIndex].json.utf8.count
                if bytes > Publisher.batchBytes, !batch.isEmpty { break }
                batch.append(state.queue.removeFirst())
            }
            // After a burst, give back the burst's storage (empty: releasing it runs no user code).
            if state.queue.isEmpty, state.queue.capacity > 4_096 { state.queue = CircularBuffer() }
            return batch
        }
    }

    /// The lane's connection, or a new one from `open`.
    func connection(_ open: () async throws -> GuardedConnection) async throws -> GuardedConnection {
        if let connection = state.withLockedValue({ $0.connection }), !connection.isClosed { return connection }
        let connection = try await open()
        state.withLockedValue { $0.connection = connection }
        return connection
    }

    /// Drops `failed`: the next batch opens a new connection.
    func discard(_ failed: GuardedConnection) async {
        state.withLockedValue { if $0.connection === failed { $0.connection = nil } }
        try? await failed.connection.close()
    }

    /// Fails what is queued with `stopped`, waits for the batch in flight, closes the connection.
    func close() async {
        let (queued, draining) = state.withLockedValue { state in
            state.closed = true
            defer { state.queue = CircularBuffer() }
            return (state.queue, state.draining)  // the items, released after their completions ran
        }
        for item in queued { item.completion(.failure(PostgresReplayError.stopped(topic: item.topic))) }
        await draining?.value
        let connection = state.withLockedValue { state in
            defer { state.connection = nil }
            return state.connection
        }
        try? await connection?.connection.close()
    }

    /// A lane let go without `close()` still closes its connection; the close handler keeps the
    /// connection alive until the channel is closed (postgres-nio checks that).
    deinit {
        if let connection = state.withLockedValue({ $0.connection })?.connection {
            connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
        }
    }
}

/// The outcome of one publish, awaited by its caller.
private final class Outcome: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<Int64, any Error>)
        case done(Result<Int64, any Error>)
    }
    private let state = NIOLockedValueBox(State.pending)

    /// Records the outcome; resumes the caller if it waits (outside the lock).
    func complete(_ result: Result<Int64, any Error>) {
        let waiting: CheckedContinuation<Int64, any Error>? = state.withLockedValue { state in
            if case .waiting(let continuation) = state {
                state = .done(result)
                return continuation
            }
            state = .done(result)
            return nil
        }
        waiting?.resume(with: result)
    }

    /// The sequence, once committed.
    var value: Int64 {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let done: Result<Int64, any Error>? = state.withLockedValue { state in
                    if case .done(let result) = state { return result }
                    state = .waiting(continuation)
                    return nil
                }
                if let done { continuation.resume(with: done) }
            }
        }
    }
}

/// Opening connections.
enum Connections {
    private static let ids = Atomic<Int>(0)

    /// Opens a connection on the shared event loop group.
    static func open(_ configuration: PostgresConnection.Configuration, logger: Logger) async throws -> PostgresConnection {
        let id = ids.wrappingAdd(1, ordering: .relaxed).newValue
        return try await PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(),
            configuration: configuration, id: id, logger: logger)
    }

    /// `configuration` with `application_name` set, so `pg_stat_activity` names the connection.
    static func named(_ configuration: PostgresConnection.Configuration, _ name: String) -> PostgresConnection.Configuration {
        var named = configuration
        named.options.additionalStartupParameters.removeAll { $0.0 == "application_name" }
        named.options.additionalStartupParameters.append(("application_name", String(name.prefix(63))))
        return named
    }
}
