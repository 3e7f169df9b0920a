import Foundation
import Logging
import PostgresNIO
import Ripple
import ServiceLifecycle
import Synchronization

/// A replay subject shared by every instance of a service that names the same topic, kept in
/// PostgreSQL: a value sent in one instance reaches the subscribers of all, in one global order.
///
/// `send(_:)` returns once the value is committed; then every instance's subscribers receive it
/// exactly once, in the topic's order (the order PostgreSQL committed the values, whichever
/// instance sent them). A late subscriber, or a new instance, first receives the retained values —
/// the last `capacity`, none older than `maxAge` on the database's clock — then the live ones,
/// with no gap and no duplicate. It is a `SignalProtocol`: every operator works on it.
///
/// It is a `ServiceLifecycle.Service`: `run()` owns the listener connection (LISTEN/NOTIFY wakes
/// it, a table holds the values). A lost connection or a server restart is caught up from the
/// last value delivered, so nothing is lost or doubled within retention; values trimmed before
/// this instance read them are reported (`MissedValuesPolicy`), never skipped in silence.
/// Graceful shutdown ends the subscriptions with `completed`. Values of any size work: those over
/// NOTIFY's 8,000-byte limit are read from the table.
///
/// Subscribers are called on the listener's task, one value at a time; use `deliver(on:)` for
/// another thread, or subscribe from an actor (`subscribe(isolation:)` delivers on it).
///
///     let feed = PostgresReplaySubject<Order>(topic: "orders", capacity: 100, maxAge: .seconds(300),
///                                             configuration: config, logger: logger)
///     feed.subscribeNext { order in print(order) }   // retained orders first, then live ones
///     let group = ServiceGroup(services: [feed, app], gracefulShutdownSignals: [.sigterm], logger: logger)
///     try await group.run()
///     …
///     try await feed.send(order)   // committed: every instance's subscribers get it, once
///
/// Every instance naming a topic should pass the same `capacity` and `maxAge`: the publisher's
/// settings decide what the table keeps.
public final class PostgresReplaySubject<Value: Codable & Sendable>: SignalProtocol, Service, Sendable {
    /// The topic: instances naming the same topic share the values.
    public let topic: String
    /// How many values are retained, in the table and for replay.
    public let capacity: Int
    /// How old a retained value may be, on the database's clock; nil keeps values regardless of age.
    public let maxAge: Duration?
    /// What happens when values were trimmed before this instance read them.
    public let onMissedValues: MissedValuesPolicy
    /// How often the idle listener checks that its connection still answers.
    public let heartbeat: Duration

    /// The NOTIFY channel: `ripple_` and a hash of the topic (channels are identifiers of at
    /// most 63 bytes; topics are any text).
    let channel: String
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let resumeAfter: Int64?
    private let local: ReplaySubject<Value>
    private let clock = DatabaseClock()
    private let state = BehaviorSubject<ConnectionState>(.idle)
    private let missed = Subject<MissedValues>()
    /// Commits `send`'s values: one connection, opened on the first send (see `Publisher`).
    let publisher: Publisher
    private let delivered: Atomic<Int64>
    private let runs = Atomic<Int>(0)

    /// Creates the subject; nothing connects until `run()` or the first `send(_:)`.
    ///
    /// - Parameters:
    ///   - topic: The shared name; any text.
    ///   - capacity: How many values the table retains and subscribers replay (at least 1).
    ///   - maxAge: How old a replayed or caught-up value may be, on the database's clock.
    ///   - resumingAfter: A `lastDeliveredSequence` this instance kept from an earlier run: it
    ///     then delivers every retained value after it, instead of the last `capacity`.
    ///   - onMissedValues: What happens when retention trimmed values before this instance read them.
    ///   - heartbeat: How often the listener checks its connection (`SELECT 1`, answered within the
    ///     same time or the connection is closed and opened again): a half-open TCP connection —
    ///     a NAT that forgot it, a failed-over VM — never reports itself, and without the check
    ///     the listener would wait on it for ever while values are committed.
    ///   - configuration: How to reach PostgreSQL (`PostgresConnection.Configuration.environment()`
    ///     reads libpq's `PGHOST`, `PGPORT`, …).
    ///   - logger: Where connection changes and missed values are logged.
    /// - Precondition: `capacity` is at least 1, `maxAge` is positive.
    public init(
        topic: String,
        capacity: Int,
        maxAge: Duration? = nil,
        resumingAfter: Int64? = nil,
        onMissedValues: MissedValuesPolicy = .fail,
        heartbeat: Duration = .seconds(5),
        configuration: PostgresConnection.Configuration,
        logger: Logger
    ) {
        precondition(capacity >= 1, "PostgresReplaySubject(topic: \(topic)) needs a capacity of at least 1, got \(capacity)")
        precondition(maxAge.map { $0 > .zero } ?? true, "PostgresReplaySubject(topic: \(topic)) needs a positive maxAge, got \(maxAge!)")
        precondition(heartbeat > .zero, "PostgresReplaySubject(topic: \(topic)) needs a positive heartbeat, got \(heartbeat)")
        precondition(resumingAfter.map { $0 >= 0 } ?? true, "PostgresReplaySubject(topic: \(topic)): resumingAfter must not be negative, got \(resumingAfter!)")
        self.topic = topic
        self.capacity = capacity
        self.maxAge = maxAge
        self.onMissedValues = onMissedValues
        self.heartbeat = heartbeat
        self.channel = Self.channel(for: topic)
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "ripple.topic"] = "\(topic)"
        self.logger = logger
        self.resumeAfter = resumingAfter
        if let maxAge {
            local = ReplaySubject(capacity: capacity, maxAge: maxAge, scheduler: clock)
        } else {
            local = ReplaySubject(capacity: capacity)
        }
        publisher = Publisher(configuration: Connections.named(configuration, "ripple publisher \(topic)"), logger: logger, maxConnections: 1)
        delivered = Atomic(resumingAfter ?? -1)
    }

    // MARK: Subscribing

    /// Adds `subscriber`: it first receives the retained values, then the live ones.
    @discardableResult
    public func subscribe(_ subscriber: any SubscriberProtocol<Value>) -> any Disposable {
        local.subscribe(subscriber)
    }

    /// Stores the closures in the local replay buffer's subscription (one call per value).
    public func makeSubscription(
        next: ((Value) -> Void)?,
        error: ((any Error) -> Void)?,
        completed: (() -> Void)?
    ) -> any Disposable {
        local.makeSubscription(next: next, error: error, completed: completed)
    }

    /// The listener's state: `idle` until `run()`, then connecting, catching up, live,
    /// disconnected (with the error), and `stopped` last. A new subscriber first gets the current state.
    ///
    ///     feed.connectionState.filter(\.isLive).take(1).subscribeNext { _ in print("live") }
    public var connectionState: Signal<ConnectionState> { state.asSignal() }

    /// The listener's state now.
    public var currentConnectionState: ConnectionState { state.value }

    /// Values this instance will never deliver, under `MissedValuesPolicy.skip` (hot: only gaps
    /// found after subscribing — a subscriber joining later replays the values on both sides of an
    /// earlier gap without it, so watch this signal from the start if gaps matter).
    public var missedValues: Signal<MissedValues> { missed.asSignal() }

    /// The sequence of the last value this instance delivered (or decided it missed), for
    /// `resumingAfter:` in a later run; nil before the first. Inside a subscriber's callback for a
    /// live value it is that value's sequence.
    ///
    /// It moves *before* the value reaches the replay buffer and the subscribers, so a
    /// subscriber added just as it moves may receive that value live instead of in its replay,
    /// whose values then start one earlier; it receives each value once either way. To know a
    /// value is in the buffer, watch for it with a subscriber.
    public var lastDeliveredSequence: Int64? {
        let sequence = delivered.load(ordering: .acquiring)
        return sequence < 0 ? nil : sequence
    }

    // MARK: Sending: `send(_:)` and `sendingSubscriber(onError:)` (PostgresReplaySubject+Sending.swift)

    // MARK: Running

    /// Listens until graceful shutdown or cancellation, then completes every subscription.
    ///
    /// Connects, creates the tables if missing, LISTENs, catches up (the retained tail the
    /// first time, or everything after the last delivered value), then delivers each value as it
    /// is committed. A failed connection is reported on `connectionState` and retried with a
    /// backoff from 50 ms to 2 s. Under `MissedValuesPolicy.fail`, a gap ends the subscriptions
    /// with `PostgresReplayError.missedValues` and `run()` throws it.
    ///
    /// - Precondition: called once.
    public func run() async throws {
        guard runs.wrappingAdd(1, ordering: .relaxed).oldValue == 0 else {
            throw PostgresReplayError.alreadyRunning(topic: topic)
        }
        var failure: (any Error)?
        do {
            try await cancelWhenGracefulShutdown { [self] in try await listen() }
        } catch is CancellationError {
        } catch {
            failure = error
        }
        await publisher.close()
        if failure == nil { local.sendCompleted() }
        logger.debug("stopped", metadata: failure.map { ["error": "\($0)"] })
        state.sendNext(.stopped)
        state.sendCompleted()
        missed.sendCompleted()
        if let failure { throw failure }
    }

    /// The listener's loop: one connection after another until cancelled.
    private func listen() async throws {
        var cursor = FeedCursor(resumingAfter: resumeAfter)
        var backoff = Duration.milliseconds(50)
        var configuration = Connections.named(configuration, "ripple listener \(topic)")
        // A lock wait never holds the listener for ever: it fails, and the listener reconnects.
        configuration.options.additionalStartupParameters.append(("lock_timeout", "10s"))
        while !Task.isCancelled {
            state.sendNext(.connecting)
            do {
                let connection = try await Connections.open(configuration, logger: logger)
                do {
                    try await Schema.ensure(on: connection, logger: logger)
                    try await connection.listen(on: channel) { notifications in
                        state.sendNext(.catchingUp)
                        try await catchUp(&cursor, on: connection)
                        state.sendNext(.live)
                        logger.debug("live", metadata: ["ripple.sequence": "\(cursor.last ?? 0)"])
                        backoff = .milliseconds(50)
                        try await withThrowingTaskGroup(of: Void.self) { watchers in
                            watchers.addTask { [self] in await watch(connection) }
                            for try await notification in notifications {
                                try await handle(notification.payload, &cursor, on: connection)
                            }
                            watchers.cancelAll()
                        }
                        if !Task.isCancelled { throw PostgresReplayError.malformed("the listener's notifications ended") }
                    }
                    try? await connection.close()
                } catch {
                    try? await connection.close()
                    throw error
                }
            } catch let error as PostgresReplayError {
                if error.endsTheSubject { throw error }
                try await reconnectLater(after: error, &backoff)
            } catch {
                if Task.isCancelled { return }
                try await reconnectLater(after: error, &backoff)
            }
        }
    }

    /// Checks every `heartbeat` that the listener's connection answers; closes it when it does not
    /// answer within another `heartbeat` (which ends the notifications with an error: the listener
    /// reconnects and catches up). Returns when cancelled or after closing the connection.
    private func watch(_ connection: PostgresConnection) async {
        while true {
            do { try await Task.sleep(for: heartbeat) } catch { return }
            let answered = await withTaskGroup(of: Bool.self) { probe in
                probe.addTask { [logger] in
                    do {
                        for try await _ in try await connection.query("SELECT 1", logger: logger) {}
                        return true
                    } catch {
                        return false
                    }
                }
                probe.addTask { [heartbeat] in
                    try? await Task.sleep(for: heartbeat)
                    return false
                }
                let first = await probe.next() ?? false
                // A query on a dead connection returns only once it is closed: close it first.
                if !first { try? await connection.close() }
                probe.cancelAll()
                return first
            }
            if !answered {
                if !Task.isCancelled {
                    logger.warning("the listener's connection did not answer within \(heartbeat): reconnecting")
                }
                return
            }
        }
    }

    private func reconnectLater(after error: any Error, _ backoff: inout Duration) async throws {
        logger.warning("listener disconnected; reconnecting", metadata: ["error": "\(String(reflecting: error))", "backoff": "\(backoff)"])
        state.sendNext(.disconnected(error))
        try await Task.sleep(for: backoff)
        backoff = min(backoff * 2, .seconds(2))
    }

    /// Delivers what was committed while this instance was not listening.
    private func catchUp(_ cursor: inout FeedCursor, on connection: PostgresConnection) async throws {
        if cursor.last != nil { return try await fetchAfter(&cursor, on: connection) }
        // A new instance: the retained tail, read with the head in one snapshot.
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
    private func fetchAfter(_ cursor: inout FeedCursor, on connection: PostgresConnection) async throws {
        let batch = 500
        while true {
            var head: Int64 = 0
            for try await row in try await connection.query(Schema.head(topic: topic), logger: logger) {
                let now: Double
                (head, now) = try row.decode((Int64, Double).self)
                clock.synchronize(databaseEpoch: now)
            }
            var rows: [(sequence: Int64, epoch: Double, json: String)] = []
            let after = cursor.last ?? 0
            for try await row in try await connection.query(
                Schema.after(topic: topic, sequence: after, limit: batch, maxAge: maxAge), logger: logger)
            {
                rows.append(try row.decode((Int64, Double, String).self))
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
                    local.sendError(error)
                    throw error
                }
            }
            if rows.count < batch { return }
        }
    }

    /// Handles one notification: the next value inline, a duplicate, or a wake-up to read the table.
    private func handle(_ text: String, _ cursor: inout FeedCursor, on connection: PostgresConnection) async throws {
        guard let payload = NotificationPayload(text) else {
            logger.warning("ignoring a notification that is not Ripple's", metadata: ["payload": "\(text.prefix(80))"])
            return
        }
        switch cursor.decide(payload) {
        case .ignore:
            return
        case .deliver(let payload):
            cursor.delivered(payload.sequence)
            try deliver(payload.sequence, payload.epoch, payload.json!)
        case .fetch:
            try await fetchAfter(&cursor, on: connection)
        }
    }

    /// Decodes and sends one value to the local subscribers, stamped with its publishing time.
    private func deliver(_ sequence: Int64, _ epoch: Double, _ json: String) throws {
        let value: Value
        do {
            value = try JSONDecoder().decode(Value.self, from: Data(json.utf8))
        } catch {
            delivered.store(sequence, ordering: .releasing)
            return try report(MissedValues(topic: topic, sequences: sequence...sequence, reason: .undecodable("\(error)")))
        }
        delivered.store(sequence, ordering: .releasing)
        DatabaseClock.stamping(epoch) { local.sendNext(value) }
    }

    /// Says that values will never be delivered, as the policy asks.
    private func report(_ gap: MissedValues) throws {
        logger.warning("missed values", metadata: ["ripple.missed": "\(gap)"])
        switch onMissedValues {
        case .skip:
            missed.sendNext(gap)
        case .fail:
            let error = PostgresReplayError.missedValues(gap)
            local.sendError(error)
            throw error
        }
    }

    /// `ripple_` and the topic's 64-bit FNV-1a hash in hex.
    static func channel(for topic: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in topic.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "ripple_" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
