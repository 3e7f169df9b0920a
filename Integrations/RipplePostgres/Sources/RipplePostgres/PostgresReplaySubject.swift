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
/// it, a table holds the values). Many subjects can share one listener connection instead: make
/// them on a `PostgresTopics` (`init(topic:capacity:…:on:)`) and run that. A lost connection or a server restart is caught up from the
/// last value delivered, so nothing is lost or doubled within retention; values trimmed before
/// this instance read them are reported (`MissedValuesPolicy`), never skipped in silence.
/// Graceful shutdown ends the subscriptions with `completed`. Values of any size work: a
/// notification is only a hint, every value is read from the table.
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
    /// How often the listener checks that its connection still answers, and that the topic was
    /// not reset.
    public let heartbeat: Duration
    private let logger: Logger
    /// Commits `send`'s values (the topics' publisher, see `Publisher`).
    let publisher: Publisher

    /// The NOTIFY channel: `ripple_` and a hash of the topic (channels are identifiers of at
    /// most 63 bytes).
    let channel: String
    /// The listener, shared or this subject's own.
    let topics: PostgresTopics
    /// Whether `topics` was made for this subject alone (its `run()` runs it).
    private let ownsTopics: Bool
    private let feed: Feed<Value>
    private let runs = Atomic<Int>(0)

    /// The longest topic, in bytes of UTF-8: the topic is the first column of the tables' primary
    /// keys, whose btree refuses index rows over about 2,700 bytes.
    public static var maximumTopicBytes: Int { 256 }

    /// Checks that `topic` can be used: not empty, no NUL, at most `maximumTopicBytes` bytes of
    /// UTF-8. Any other text is fine (the topic is always bound, never spliced into SQL; logs
    /// and connection names escape it).
    ///
    ///     do { try PostgresReplaySubject<Order>.validate(topic: name) } catch { print(error) }
    ///
    /// - Throws: `InvalidTopic` naming the problem.
    public static func validate(topic: String) throws(InvalidTopic) {
        if topic.isEmpty { throw .empty }
        if topic.utf8.contains(0) { throw .containsNul }
        if topic.utf8.count > maximumTopicBytes { throw .tooLong(bytes: topic.utf8.count) }
    }

    /// Creates the subject with a listener connection of its own; nothing connects until `run()`
    /// or the first `send(_:)`. For many topics, share one listener: `init(topic:…:on:)`.
    ///
    /// - Parameters:
    ///   - topic: The shared name: any text that passes `validate(topic:)`.
    ///   - capacity: How many values the table retains and subscribers replay (at least 1).
    ///   - maxAge: How old a replayed or caught-up value may be, on the database's clock.
    ///   - resumingAfter: A `lastDeliveredSequence` this instance kept from an earlier run: it
    ///     then delivers every retained value after it, instead of the last `capacity`.
    ///   - onMissedValues: What happens when retention trimmed values before this instance read them.
    ///   - heartbeat: How often the listener checks its connection (a query of the topic's head, answered within the
    ///     same time or the connection is closed and opened again): a half-open TCP connection —
    ///     a NAT that forgot it, a failed-over VM — never reports itself, and without the check
    ///     the listener would wait on it for ever while values are committed.
    ///   - notificationKey: A secret every instance shares: sends carry their values in the
    ///     notification, signed, and signed values are delivered without reading the table (see
    ///     `NotificationKey`). Without it, every value is read from the table.
    ///   - configuration: How to reach PostgreSQL (`PostgresConnection.Configuration.environment()`
    ///     reads libpq's `PGHOST`, `PGPORT`, …). The tables are created if missing
    ///     (`PostgresTopics.SchemaPolicy.createIfMissing`).
    ///   - logger: Where connection changes and missed values are logged.
    /// - Precondition: the topic is valid (`validate(topic:)`), `capacity` is at least 1,
    ///   `maxAge` and `heartbeat` are positive.
    public convenience init(
        topic: String,
        capacity: Int,
        maxAge: Duration? = nil,
        resumingAfter: Int64? = nil,
        onMissedValues: MissedValuesPolicy = .fail,
        heartbeat: Duration = .seconds(5),
        notificationKey: NotificationKey? = nil,
        configuration: PostgresConnection.Configuration,
        logger: Logger
    ) {
        Self.check(topic: topic)
        precondition(heartbeat > .zero, "PostgresReplaySubject(topic: \(Untrusted.escaped(topic))) needs a positive heartbeat, got \(heartbeat)")
        let topics = PostgresTopics(
            name: topic, listener: "ripple listener \(topic)", publisher: "ripple publisher \(topic)",
            configuration: configuration, logger: logger, heartbeat: heartbeat, schema: .createIfMissing,
            publishingConnections: 1, notificationKey: notificationKey)
        self.init(topic: topic, capacity: capacity, maxAge: maxAge, resumingAfter: resumingAfter,
                  onMissedValues: onMissedValues, topics: topics, owning: true)
    }

    /// Creates the subject on a shared listener: `topics` LISTENs on this topic's channel (now if
    /// it runs, else when it starts), catches it up and delivers its values; sends go through its
    /// publishing connection. Run `topics` as the service, not this subject. Releasing the
    /// subject UNLISTENs its channel and completes its subscriptions.
    ///
    ///     let topics = PostgresTopics(name: "app", configuration: config, logger: logger)
    ///     let orders = PostgresReplaySubject<Order>(topic: "orders", capacity: 100, on: topics)
    ///     let group = ServiceGroup(services: [topics, app], gracefulShutdownSignals: [.sigterm], logger: logger)
    ///
    /// - Parameters: as `init(topic:capacity:maxAge:resumingAfter:onMissedValues:heartbeat:configuration:logger:)`;
    ///   the connection, heartbeat and schema policy are `topics`'.
    /// - Precondition: the topic is valid (`validate(topic:)`), `capacity` is at least 1,
    ///   `maxAge` is positive.
    public convenience init(
        topic: String,
        capacity: Int,
        maxAge: Duration? = nil,
        resumingAfter: Int64? = nil,
        onMissedValues: MissedValuesPolicy = .fail,
        on topics: PostgresTopics
    ) {
        Self.check(topic: topic)
        self.init(topic: topic, capacity: capacity, maxAge: maxAge, resumingAfter: resumingAfter,
                  onMissedValues: onMissedValues, topics: topics, owning: false)
    }

    private static func check(topic: String) {
        do {
            try validate(topic: topic)
        } catch {
            preconditionFailure("PostgresReplaySubject(topic: \(Untrusted.escaped(topic))): \(error)")
        }
    }

    private init(topic: String, capacity: Int, maxAge: Duration?, resumingAfter: Int64?,
                 onMissedValues: MissedValuesPolicy, topics: PostgresTopics, owning: Bool) {
        let shown = Untrusted.escaped(topic)
        precondition(capacity >= 1, "PostgresReplaySubject(topic: \(shown)) needs a capacity of at least 1, got \(capacity)")
        precondition(maxAge.map { $0 > .zero } ?? true, "PostgresReplaySubject(topic: \(shown)) needs a positive maxAge, got \(maxAge!)")
        precondition(resumingAfter.map { $0 >= 0 } ?? true, "PostgresReplaySubject(topic: \(shown)): resumingAfter must not be negative, got \(resumingAfter!)")
        self.topic = topic
        self.capacity = capacity
        self.maxAge = maxAge
        self.onMissedValues = onMissedValues
        self.heartbeat = topics.heartbeat
        self.channel = Self.channel(for: topic)
        var logger = topics.logger
        logger[metadataKey: "ripple.topic"] = "\(shown)"
        self.logger = logger
        self.topics = topics
        self.ownsTopics = owning
        feed = Feed(topic: topic, channel: channel, capacity: capacity, maxAge: maxAge, resumingAfter: resumingAfter,
                    onMissedValues: onMissedValues, logger: logger)
        publisher = topics.publisher
        topics.add(feed)
    }

    /// A subject on shared topics that is let go: its channel is UNLISTENed, its subscribers completed.
    deinit {
        if !ownsTopics { topics.remove(feed) }
    }

    // MARK: Subscribing

    /// Adds `subscriber`: it first receives the retained values, then the live ones.
    @discardableResult
    public func subscribe(_ subscriber: any SubscriberProtocol<Value>) -> any Disposable {
        feed.local.subscribe(subscriber)
    }

    /// Stores the closures in the local replay buffer's subscription (one call per value).
    public func makeSubscription(
        next: ((Value) -> Void)?,
        error: ((any Error) -> Void)?,
        completed: (() -> Void)?
    ) -> any Disposable {
        feed.local.makeSubscription(next: next, error: error, completed: completed)
    }

    /// The listener's state: `idle` until `run()`, then connecting, catching up, live,
    /// disconnected (with the error), and `stopped` last. A new subscriber first gets the current state.
    ///
    ///     feed.connectionState.filter(\.isLive).take(1).subscribeNext { _ in print("live") }
    public var connectionState: Signal<ConnectionState> { feed.state.asSignal() }

    /// The listener's state now.
    public var currentConnectionState: ConnectionState { feed.state.value }

    /// Values this instance will never deliver, under `MissedValuesPolicy.skip` (hot: only gaps
    /// found after subscribing — a subscriber joining later replays the values on both sides of an
    /// earlier gap without it, so watch this signal from the start if gaps matter).
    public var missedValues: Signal<MissedValues> { feed.missed.asSignal() }

    /// The sequence of the last value this instance delivered (or decided it missed), for
    /// `resumingAfter:` in a later run; nil before the first. Inside a subscriber's callback for a
    /// live value it is that value's sequence.
    ///
    /// It moves *before* the value reaches the replay buffer and the subscribers, so a
    /// subscriber added just as it moves may receive that value live instead of in its replay,
    /// whose values then start one earlier; it receives each value once either way. To know a
    /// value is in the buffer, watch for it with a subscriber.
    public var lastDeliveredSequence: Int64? {
        let sequence = feed.delivered.load(ordering: .acquiring)
        return sequence < 0 ? nil : sequence
    }

    // MARK: Sending: `send(_:)` and `sendingSubscriber(onError:)` (PostgresReplaySubject+Sending.swift)

    // MARK: Running

    /// For a subject with a listener of its own: listens until graceful shutdown or
    /// cancellation, then completes every subscription. For a subject on shared `PostgresTopics`:
    /// waits until the topics stop (run the topics as the service; this is for code that wants to
    /// await one subject), or this subject ends.
    ///
    /// Connects, creates the tables if missing, LISTENs, catches up (the retained tail the
    /// first time, or everything after the last delivered value), then reads each value from the
    /// table as a notification hints at it. A failed connection is reported on
    /// `connectionState` and retried with a backoff from 50 ms to 2 s; an error reconnecting
    /// cannot fix (`PostgresReplayError.refused`: no privilege, failed authentication; or
    /// `.schemaMissing`) ends the subscriptions with it and is thrown. Under
    /// `MissedValuesPolicy.fail`, a gap ends the subscriptions with
    /// `PostgresReplayError.missedValues` and `run()` throws it.
    ///
    /// - Precondition: called once.
    public func run() async throws {
        guard runs.wrappingAdd(1, ordering: .relaxed).oldValue == 0 else {
            throw PostgresReplayError.alreadyRunning(topic: topic)
        }
        guard ownsTopics else {
            do { try await feed.ending.wait() } catch is CancellationError {}
            return
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [topics] in try await topics.run() }
            group.addTask { [feed] in  // this subject ended alone (a gap under .fail): stop the listener
                do { try await feed.ending.wait() } catch is CancellationError {}
            }
            defer { group.cancelAll() }
            _ = try await group.next()
        }
    }

    /// `ripple_` and the topic's 64-bit FNV-1a hash in hex.
    static func channel(for topic: String) -> String {
        let hex = String(topicHash(topic), radix: 16)
        return "ripple_" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The topic's 64-bit FNV-1a hash, of its bytes (as PostgreSQL compares topics): its NOTIFY
    /// channel and its publishing lane.
    static func topicHash(_ topic: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in topic.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }
}
