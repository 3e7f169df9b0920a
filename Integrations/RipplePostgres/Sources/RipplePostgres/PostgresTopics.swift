import Logging
import PostgresNIO
import ServiceLifecycle
import struct NIOConcurrencyHelpers.NIOLockedValueBox
import Synchronization

/// One listening connection (and one publishing connection) shared by every
/// `PostgresReplaySubject` made on it: a service with many topics uses two connections, not two
/// per topic.
///
/// Run it as a service; make subjects on it with `PostgresReplaySubject(topic:…, on: topics)` —
/// before or while it runs. Each subject's channel is LISTENed on the one connection as the
/// subject comes (then its topic is caught up, as a subject of its own would), and UNLISTENed when
/// the subject is released. Graceful shutdown completes every subject's subscriptions once.
///
///     let topics = PostgresTopics(name: "orders-service", configuration: config, logger: logger)
///     let orders = PostgresReplaySubject<Order>(topic: "orders", capacity: 100, on: topics)
///     let prices = PostgresReplaySubject<Price>(topic: "prices", capacity: 10, on: topics)
///     let group = ServiceGroup(services: [topics, app], gracefulShutdownSignals: [.sigterm], logger: logger)
///
/// Every subscriber of every topic is called on the one listener task, one value at a time: a
/// slow subscriber holds up every topic of this `PostgresTopics` (notifications go on being
/// drained meanwhile, and only mark topics to read, so memory stays bounded). Give a slow
/// subscriber `deliver(on:)`, or subscribe from an actor.
///
/// Notifications are only hints: values are read from `ripple_values`, so only a role allowed to
/// INSERT there can make one (see the package README's trust model) — unless every instance
/// shares a `NotificationKey`: then a notification carries its values signed, and those whose
/// signature checks are delivered without the read. Malformed or forged notifications are
/// counted (`statistics`) and logged at most every 10 s, escaped.
public final class PostgresTopics: Service, Sendable {
    /// Whether connections may create the tables.
    ///
    ///     let topics = PostgresTopics(configuration: config, logger: logger, schema: .mustExist)
    public enum SchemaPolicy: Sendable, Equatable {
        /// Creates the tables when they are missing (checked first with a plain query, so a role
        /// with SELECT only never runs DDL once they exist). The default: a new project works at
        /// once, and a role without CREATE fails only where the tables are missing anyway.
        case createIfMissing
        /// Never runs DDL: missing tables end `run()` with `PostgresReplayError.schemaMissing`.
        /// For roles kept apart from migrations (`migrate(configuration:logger:)`).
        case mustExist
    }

    /// What the listener has seen, for monitoring: notifications are untrusted, so their costs
    /// are counted.
    ///
    ///     let seen = topics.statistics
    ///     if seen.rejected > 0 { logger.warning("forged or foreign notifications: \(seen)") }
    public struct Statistics: Sendable, Equatable, CustomStringConvertible {
        /// Notifications received, on every channel.
        public var notifications = 0
        /// Notifications naming a sequence already read: ignored at no cost.
        public var stale = 0
        /// Notifications that are neither a decimal sequence nor a signed batch, or a signed
        /// batch whose signature fails this listener's `NotificationKey` (forged, or another
        /// program's or key's): they only asked for a read, like any hint.
        public var rejected = 0
        /// Reads of the table (one query each, plus one more per 500 values).
        public var reads = 0
        /// Signed batches delivered from their notification, with no read (`NotificationKey`);
        /// one that does not follow the last value delivered, does not decode, or is older than
        /// a minute, is read from the table instead (and counted in `reads`).
        public var signedBatches = 0

        /// For example `notifications 120, stale 3, rejected 0, reads 80, signed batches 0`.
        public var description: String {
            "notifications \(notifications), stale \(stale), rejected \(rejected), reads \(reads), signed batches \(signedBatches)"
        }
    }

    /// The name shown in `pg_stat_activity` (`ripple listener NAME`, `ripple publisher NAME`).
    public let name: String
    /// How often the listener checks that its connection still answers, and that no topic it
    /// follows was reset.
    public let heartbeat: Duration
    /// Whether connections may create the tables.
    public let schema: SchemaPolicy

    let logger: Logger
    /// Checks signed notifications (and signs this process's), if given.
    let notificationKey: NotificationKey?
    /// The connection sends go through, shared by every subject made on these topics.
    let publisher: Publisher
    private let listenerConfiguration: PostgresConnection.Configuration
    private let router = NIOLockedValueBox(Router())
    private let runs = Atomic<Int>(0)
    private let rejections = RateLimitedLog()

    /// Creates the topics; nothing connects until `run()` or a subject's first `send`.
    ///
    /// - Parameters:
    ///   - name: Shown in `pg_stat_activity` as `ripple listener NAME` (printable ASCII is kept,
    ///     anything else becomes `?`, at most 63 bytes in all).
    ///   - configuration: How to reach PostgreSQL (`PostgresConnection.Configuration.environment()`).
    ///   - logger: Where connection changes, missed values and rejected notifications are logged.
    ///   - heartbeat: How often the listener checks its connection (a query of the heads of the
    ///     topics it follows, answered within
    ///     the same time or the connection is closed and opened again): a half-open TCP
    ///     connection never reports itself.
    ///   - schema: Whether connections may create the tables (`.createIfMissing` by default).
    ///   - notificationKey: A secret shared by every instance: sends put their values in the
    ///     notification, signed, and the listener delivers signed values without reading the
    ///     table — one round trip less per delivery (see `NotificationKey`). Without it
    ///     (the default), notifications are hints and every value is read from the table.
    /// - Precondition: `heartbeat` is positive.
    public convenience init(
        name: String = "topics",
        configuration: PostgresConnection.Configuration,
        logger: Logger,
        heartbeat: Duration = .seconds(5),
        schema: SchemaPolicy = .createIfMissing,
        notificationKey: NotificationKey? = nil
    ) {
        self.init(name: name, listener: "ripple listener \(name)", publisher: "ripple publisher \(name)",
                  configuration: configuration, logger: logger, heartbeat: heartbeat, schema: schema,
                  publishingConnections: 2, notificationKey: notificationKey)
    }

    /// The topics of one subject of its own: connections named after its topic.
    init(name: String, listener: String, publisher: String, configuration: PostgresConnection.Configuration,
         logger: Logger, heartbeat: Duration, schema: SchemaPolicy, publishingConnections: Int, notificationKey: NotificationKey?) {
        precondition(heartbeat > .zero, "PostgresTopics(name: \(Untrusted.escaped(name))) needs a positive heartbeat, got \(heartbeat)")
        self.name = name
        self.heartbeat = heartbeat
        self.schema = schema
        self.notificationKey = notificationKey
        var logger = logger
        logger[metadataKey: "ripple.topics"] = "\(Untrusted.escaped(name))"
        self.logger = logger
        var listening = Connections.named(configuration, Untrusted.applicationName(listener))
        // A lock wait never holds the listener for ever: it fails, and the listener reconnects.
        listening.options.additionalStartupParameters.append(("lock_timeout", "10s"))
        listenerConfiguration = listening
        self.publisher = Publisher(
            configuration: Connections.named(configuration, Untrusted.applicationName(publisher)), logger: logger,
            maxConnections: publishingConnections, createsSchema: schema == .createIfMissing, notificationKey: notificationKey)
    }

    /// Creates the tables and their index if missing (idempotent; an advisory lock keeps
    /// concurrent migrations apart). Run it once with a role that may create tables, then give
    /// followers SELECT and publishers INSERT, UPDATE, DELETE (see the package README).
    ///
    ///     try await PostgresTopics.migrate(configuration: .environment(), logger: logger)
    public static func migrate(configuration: PostgresConnection.Configuration, logger: Logger) async throws {
        let connection = try await Connections.open(
            Connections.named(configuration, "ripple migrate"), logger: logger)
        do {
            // Guarded: a statement written as the connection closes would never fail.
            try await GuardedConnection(connection).run { try await Schema.migrate(on: $0, logger: logger) }
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }

    /// The listener's counts so far, since the topics were made.
    ///
    ///     print(topics.statistics)   // notifications 120, stale 3, rejected 0, reads 80
    public var statistics: Statistics { router.withLockedValue { $0.statistics } }

    // MARK: Subjects

    /// Adds a subject's reader: LISTENed and caught up now if running, else when `run()` connects.
    /// A subject added after `run()` returned is ended at once.
    func add(_ feed: any TopicReader) {
        let outcome = router.withLockedValue { $0.add(feed) }
        switch outcome {
        case .stopped: feed.finish(nil)
        case .running: feed.setState(.connecting)
        case .waiting: break
        }
    }

    /// Removes a subject's reader (its channel is UNLISTENed when no other subject uses it) and
    /// ends its subscribers.
    func remove(_ feed: any TopicReader, failure: (any Error)? = nil) {
        router.withLockedValue { $0.remove(feed) }
        feed.finish(failure)
    }

    // MARK: Running

    /// Listens until graceful shutdown or cancellation, then completes every subject's
    /// subscriptions once; closes the publishing connection (later sends throw `stopped`).
    ///
    /// Connects, checks the tables (creating them if missing under `.createIfMissing`), LISTENs
    /// on every subject's channel and catches each topic up, then reads each topic when a
    /// notification hints at a new value. A failed connection is reported on every subject's
    /// `connectionState` and retried with a backoff from 50 ms to 2 s; an error reconnecting
    /// cannot fix (`PostgresReplayError.refused`: no privilege, no table, failed authentication;
    /// `.schemaMissing`) ends every subject with it and is thrown. A subject whose values were
    /// trimmed under `MissedValuesPolicy.fail`, or whose cursor is ahead, ends alone.
    ///
    /// - Precondition: called once.
    public func run() async throws {
        guard runs.wrappingAdd(1, ordering: .relaxed).oldValue == 0 else {
            throw PostgresReplayError.alreadyRunning(topic: "PostgresTopics(name: \(Untrusted.escaped(name)))")
        }
        var failure: (any Error)?
        do {
            try await cancelWhenGracefulShutdown { [self] in try await listen() }
        } catch is CancellationError {
        } catch {
            failure = error
        }
        let feeds = router.withLockedValue { $0.stop() }
        await publisher.close()
        for feed in feeds { feed.finish(failure) }
        logger.debug("stopped", metadata: failure.map { ["error": "\(Untrusted.describe($0))"] })
        if let failure { throw failure }
    }

    /// One connection after another until cancelled, or until an error reconnecting cannot fix.
    private func listen() async throws {
        var backoff = Duration.milliseconds(50)
        while !Task.isCancelled {
            for feed in router.withLockedValue({ $0.feeds }) { feed.setState(.connecting) }
            let wentLive = Flag()
            do {
                let connection = try await Connections.open(listenerConfiguration, logger: logger)
                do {
                    let guarded = GuardedConnection(connection)  // from the first query on
                    let createIfMissing = schema == .createIfMissing
                    try await guarded.run { [logger] in
                        try await Schema.prepare(on: $0, createIfMissing: createIfMissing, logger: logger)
                    }
                    try await session(on: guarded, wentLive: wentLive)
                    try? await connection.close()
                } catch {
                    try? await connection.close()
                    throw error
                }
            } catch {
                if Task.isCancelled { return }
                if wentLive.isSet { backoff = .milliseconds(50) }
                if let permanent = Self.permanent(error) {
                    logger.error("the database refused the listener", metadata: ["error": "\(permanent)"])
                    for feed in router.withLockedValue({ $0.feeds }) { feed.setState(.disconnected(permanent)) }
                    throw permanent
                }
                logger.warning("listener disconnected; reconnecting",
                               metadata: ["error": "\(Untrusted.describe(error))", "backoff": "\(backoff)"])
                for feed in router.withLockedValue({ $0.feeds }) { feed.setState(.disconnected(error)) }
                try await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(2))
            }
        }
    }

    /// The error to end `run()` with, when reconnecting cannot fix `error`.
    static func permanent(_ error: any Error) -> PostgresReplayError? {
        if case .schemaMissing? = error as? PostgresReplayError { return .schemaMissing }
        return Untrusted.permanent(error)
    }

    /// What happens on one connection: a heartbeat, the reader, and the channels' listeners.
    /// Returns when cancelled; throws when the connection fails.
    private func session(on connection: GuardedConnection, wentLive: Flag) async throws {
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let (events, event) = AsyncStream.makeStream(of: SessionEvent.self)
        router.withLockedValue { $0.begin(Session(wake: wake, events: event)) }
        defer { router.withLockedValue { $0.end() } }
        event.yield(.changed)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [logger] in
                defer { logger.trace("heartbeat stopped") }
                try await self.watch(connection)
            }
            group.addTask { [logger] in
                defer { logger.trace("reader stopped") }
                try await self.readLoop(wakes, on: connection, wentLive: wentLive)
            }
            group.addTask { [logger] in
                defer { logger.trace("registrar stopped") }
                try await self.register(events, on: connection, reporting: event)
            }
            _ = try await group.next()
            group.cancelAll()
        }
        if !Task.isCancelled { throw PostgresReplayError.malformed("the listener's session ended") }
    }

    /// What the channels' listeners tell the registrar.
    enum SessionEvent: Sendable {
        /// Subjects came or went: LISTEN or UNLISTEN to match.
        case changed
        /// A channel's notifications failed: the connection is gone.
        case failed(any Error)
    }

    /// LISTENs on each subject's channel (a task per channel, draining its notifications into the
    /// router at once, whatever the subscribers do) and UNLISTENs channels no subject uses any more.
    private func register(_ events: AsyncStream<SessionEvent>, on connection: GuardedConnection,
                          reporting event: AsyncStream<SessionEvent>.Continuation) async throws {
        var listeners: [String: Task<Void, Never>] = [:]
        defer { for listener in listeners.values { listener.cancel() } }
        for await change in events {
            if case .failed(let error) = change { throw error }
            // Until the listeners match the wanted channels in one locked look: a subject added
            // meanwhile for a channel being UNLISTENed either shows in that look (another round)
            // or comes after it, finds the channel not listened, and sends `.changed`.
            while true {
                let wanted = router.withLockedValue { $0.channels }
                for channel in wanted where listeners[channel] == nil {
                    listeners[channel] = Task { await self.drain(channel, on: connection, reporting: event) }
                }
                var gone: [String] = []
                for (channel, listener) in listeners where !wanted.contains(channel) {
                    listener.cancel()  // ends its notification sequence: postgres-nio sends UNLISTEN
                    listeners[channel] = nil
                    gone.append(channel)
                }
                let listening = Set(listeners.keys)
                let matched = router.withLockedValue { router in
                    for channel in gone { router.unlistened(channel) }
                    return router.channels.isSubset(of: listening)
                }
                if matched { break }
            }
        }
    }

    /// LISTENs on `channel`, queues its subjects' catch-up, then hands each notification to the
    /// router: never waits for a read or a subscriber, so postgres-nio's buffer stays empty.
    private func drain(_ channel: String, on connection: GuardedConnection,
                       reporting event: AsyncStream<SessionEvent>.Continuation) async {
        do {
            try await connection.connection.listen(on: channel) { notifications in
                // A drain cancelled (its channel UNLISTENed) just as its LISTEN succeeded must not
                // mark the channel listened: the registrar cancels first, then unmarks it.
                router.withLockedValue { if !Task.isCancelled { $0.listened(channel) } }
                for try await notification in notifications {
                    let payload = NotificationPayload(notification.payload)
                    // A signed batch is checked outside the lock (HMAC over up to 8 KB), against
                    // each topic on the channel (one, unless two topics' hashes collide).
                    var verified: Set<ObjectIdentifier> = []
                    if case .signed(let batch) = payload, let key = notificationKey {
                        let candidates = router.withLockedValue { $0.topics(on: channel) }
                        var checked: [[UInt8]: Bool] = [:]  // by bytes, as PostgreSQL compares topics
                        for candidate in candidates {
                            let bytes = Array(candidate.topic.utf8)
                            let valid = checked[bytes] ?? batch.verified(by: key, topic: candidate.topic)
                            checked[bytes] = valid
                            if valid { verified.insert(candidate.id) }
                        }
                    }
                    let rejected = router.withLockedValue {
                        $0.notified(channel, payload, signedFor: verified, keyed: notificationKey != nil)
                    }
                    if rejected, let suppressed = rejections.due() {
                        logger.warning("ignoring a notification that is not a sequence", metadata: [
                            "ripple.channel": "\(channel)",
                            "payload": "\(Untrusted.escaped(notification.payload))",
                            "ripple.suppressed": "\(suppressed)",
                        ])
                    }
                }
            }
            if !Task.isCancelled { event.yield(.failed(PostgresReplayError.malformed("the notifications on \(channel) ended"))) }
        } catch {
            logger.trace("notifications failed", metadata: ["ripple.channel": "\(channel)", "error": "\(Untrusted.describe(error))"])
            if !Task.isCancelled { event.yield(.failed(error)) }
        }
    }

    /// Reads the queued topics, one at a time, delivering to their subscribers.
    private func readLoop(_ wakes: AsyncStream<Void>, on connection: GuardedConnection, wentLive: Flag) async throws {
        for await _ in wakes {
            while let (feed, catchingUp, work) = router.withLockedValue({ $0.next() }) {
                try Task.checkCancellation()
                if catchingUp { feed.setState(.catchingUp) }
                do {
                    let cursor: Int64?
                    switch work {
                    case .read:
                        logger.trace("reading", metadata: ["ripple.topic": "\(Untrusted.escaped(feed.topic))"])
                        cursor = try await feed.read(on: connection)
                    case .deliver(let batches):
                        let counts = DeliveryCounts()
                        defer { router.withLockedValue { $0.delivered(signed: counts.signed, reads: counts.reads) } }
                        cursor = try await feed.deliver(batches, on: connection, counting: counts)
                    }
                    router.withLockedValue { $0.read(feed, upTo: cursor) }
                    if catchingUp {
                        wentLive.set()
                        feed.setState(.live)
                        logger.debug("live", metadata: ["ripple.topic": "\(Untrusted.escaped(feed.topic))", "ripple.sequence": "\(cursor ?? 0)"])
                    }
                } catch let error as PostgresReplayError {
                    switch error {
                    case .missedValues, .cursorAhead: remove(feed, failure: error)  // this subject alone
                    default: throw error
                    }
                }
            }
        }
    }

    /// Checks every `heartbeat` that the connection answers; closes it and throws when it does not
    /// answer within another `heartbeat`. Returns when cancelled.
    private func watch(_ guarded: GuardedConnection) async throws {
        let connection = guarded.connection
        while true {
            do { try await Task.sleep(for: heartbeat) } catch { return }
            let answered = await withTaskGroup(of: Bool.self) { probe in
                probe.addTask { [logger, self] in
                    do {
                        // The probe reads the heads of the topics caught up on this connection:
                        // a head below the cursor means the topic was reset (rows deleted, a
                        // restore), and its new values' hints would look stale for ever.
                        let cursors = router.withLockedValue { $0.cursors() }
                        if cursors.isEmpty {
                            for try await epoch in try await guarded.query(
                                "SELECT extract(epoch FROM clock_timestamp())::float8", logger: logger
                            ).decode(Double.self) {
                                for feed in router.withLockedValue({ $0.feeds }) { feed.synchronize(databaseEpoch: epoch) }
                            }
                            return true
                        }
                        // Keyed by bytes, as PostgreSQL compares topics (Swift's `String` equality is
                        // canonical equivalence: "caf\u{e9}" and "cafe\u{301}" are one there, two here).
                        let cursorOf = Dictionary(cursors.map { (Array($0.topic.utf8), $0.cursor) }, uniquingKeysWith: max)
                        let topics = cursorOf.keys.map { String(decoding: $0, as: UTF8.self) }
                        var behind: Set<[UInt8]> = []
                        var epoch: Double?
                        for try await (topic, head, now) in try await guarded.query(
                            """
                            SELECT t, coalesce(r.head, 0), extract(epoch FROM clock_timestamp())::float8
                            FROM pg_catalog.unnest(\(topics)::text[]) AS t LEFT JOIN ripple_topics r ON r.topic = t
                            """,
                            logger: logger
                        ).decode((String, Int64, Double).self) {
                            let bytes = Array(topic.utf8)
                            if let cursor = cursorOf[bytes], head < cursor { behind.insert(bytes) }
                            epoch = now
                        }
                        if let epoch { for feed in router.withLockedValue({ $0.feeds }) { feed.synchronize(databaseEpoch: epoch) } }
                        if !behind.isEmpty { router.withLockedValue { $0.reread(topics: behind) } }
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
            if Task.isCancelled { return }
            if !answered {
                throw PostgresReplayError.malformed("the listener's connection did not answer within \(heartbeat)")
            }
        }
    }
}

/// A flag set once, read by another task.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}

/// The channels of one connection.
struct Session {
    /// Wakes the reader (buffering one wake).
    let wake: AsyncStream<Void>.Continuation
    /// Tells the registrar.
    let events: AsyncStream<PostgresTopics.SessionEvent>.Continuation
    /// Channels LISTENed on this connection.
    var listening: Set<String> = []
}

/// Who listens to what, and which topics are to be read: `PostgresTopics`' state, under its lock.
/// Nothing here calls user code or waits.
struct Router {
    private struct Entry {
        let feed: any TopicReader
        var hints: TopicHints
    }
    private var entries: [ObjectIdentifier: Entry] = [:]
    private var byChannel: [String: [ObjectIdentifier]] = [:]
    /// Topics queued for the reader; each at most once (`TopicHints.queued`).
    private var queue: [ObjectIdentifier] = []
    private var queueStart = 0
    private var session: Session?
    private var stopped = false
    private(set) var statistics = PostgresTopics.Statistics()
    /// The bytes of JSON in every topic's queued signed batches (`TopicHints.inlineBytes`).
    private var inlineBytes = 0

    enum Added { case waiting, running, stopped }

    var feeds: [any TopicReader] { entries.values.map(\.feed) }
    var channels: Set<String> { Set(byChannel.keys) }

    mutating func add(_ feed: any TopicReader) -> Added {
        if stopped { return .stopped }
        let id = ObjectIdentifier(feed)
        entries[id] = Entry(feed: feed, hints: TopicHints(cursor: feed.startCursor))
        byChannel[feed.channel, default: []].append(id)
        guard let session else { return .waiting }
        if session.listening.contains(feed.channel) {
            enqueue(id)  // LISTEN already runs: catch this one up now
        } else {
            session.events.yield(.changed)
        }
        return .running
    }

    mutating func remove(_ feed: any TopicReader) {
        let id = ObjectIdentifier(feed)
        guard let removed = entries.removeValue(forKey: id) else { return }
        inlineBytes -= removed.hints.inlineBytes
        byChannel[feed.channel]?.removeAll { $0 == id }
        if byChannel[feed.channel]?.isEmpty == true {
            byChannel[feed.channel] = nil
            session?.events.yield(.changed)
        }
    }

    mutating func begin(_ session: Session) {
        self.session = session
        for id in entries.keys { entries[id]!.hints.reconnected() }
        inlineBytes = 0
        queue = []
        queueStart = 0
    }

    mutating func end() {
        session?.wake.finish()
        session?.events.finish()
        session = nil
    }

    /// Ends for good: returns every subject, to be ended.
    mutating func stop() -> [any TopicReader] {
        stopped = true
        end()
        defer { entries = [:]; byChannel = [:]; inlineBytes = 0 }
        return feeds
    }

    /// `channel` is LISTENed: its subjects are read (caught up) next.
    mutating func listened(_ channel: String) {
        session?.listening.insert(channel)
        for id in byChannel[channel] ?? [] { enqueue(id) }
    }

    mutating func unlistened(_ channel: String) {
        session?.listening.remove(channel)
    }

    /// The subjects listening on `channel`, with their topics (to check a signed batch against).
    func topics(on channel: String) -> [(id: ObjectIdentifier, topic: String)] {
        (byChannel[channel] ?? []).map { ($0, entries[$0]!.feed.topic) }
    }

    /// A notification on `channel`: `signedFor` holds the subjects whose topic a signed batch's
    /// signature was checked against (none if it failed, or without a key). Returns whether the payload was
    /// rejected: malformed, or signed but failing the check of a listener holding a key.
    mutating func notified(_ channel: String, _ payload: NotificationPayload, signedFor verified: Set<ObjectIdentifier>, keyed: Bool) -> Bool {
        statistics.notifications += 1
        let rejected: Bool
        switch payload {
        case .malformed: rejected = true
        case .signed: rejected = keyed && verified.isEmpty
        case .hint: rejected = false
        }
        for id in byChannel[channel] ?? [] {
            let before = entries[id]!.hints.inlineBytes
            let outcome: TopicHints.Outcome
            if case .signed(let batch) = payload, verified.contains(id) {
                outcome = entries[id]!.hints.offer(SignedValues(batch), room: Self.inlineLimit - inlineBytes)
            } else {
                outcome = entries[id]!.hints.hint(last: payload.last)
            }
            inlineBytes += entries[id]!.hints.inlineBytes - before
            switch outcome {
            case .stale: statistics.stale += 1
            case .queue: appendToQueue(id)
            case .coalesced: break
            }
        }
        if rejected { statistics.rejected += 1 }
        return rejected
    }

    /// The most bytes of signed batches queued over all topics: more become reads.
    static let inlineLimit = 4 << 20

    private mutating func enqueue(_ id: ObjectIdentifier) {
        inlineBytes -= entries[id]!.hints.inlineBytes  // `want` drops the queued batches
        if entries[id]!.hints.want() == .queue { appendToQueue(id) }
    }

    private mutating func appendToQueue(_ id: ObjectIdentifier) {
        queue.append(id)
        session?.wake.yield()
    }

    /// The next topic to read or deliver, whether it is its catch-up on this connection, and the work.
    mutating func next() -> (feed: any TopicReader, catchingUp: Bool, work: TopicHints.Work)? {
        while queueStart < queue.count {
            let id = queue[queueStart]
            queueStart += 1
            if queueStart == queue.count {
                queue.removeAll(keepingCapacity: true)
                queueStart = 0
            }
            guard var entry = entries[id], entry.hints.queued else { continue }
            inlineBytes -= entry.hints.inlineBytes
            let work = entry.hints.take()
            entries[id] = entry
            if work == .read { statistics.reads += 1 }
            return (entry.feed, !entry.hints.caughtUp, work)
        }
        return nil
    }

    /// The topics caught up on this connection, and their cursors (for the heartbeat's check).
    func cursors() -> [(topic: String, cursor: Int64)] {
        entries.values.compactMap { entry in
            guard entry.hints.caughtUp, let cursor = entry.hints.cursor else { return nil }
            return (entry.feed.topic, cursor)
        }
    }

    /// Reads `topics` again (the heartbeat saw their head below the cursor: the read reports
    /// `cursorAhead`).
    mutating func reread(topics: Set<[UInt8]>) {
        for (id, entry) in entries where topics.contains(Array(entry.feed.topic.utf8)) {
            let before = entry.hints.inlineBytes
            let outcome = entries[id]!.hints.want()
            inlineBytes -= before
            if outcome == .queue { appendToQueue(id) }
        }
    }

    /// The reader delivered `signed` batches from their notifications, and read the table `reads`
    /// times instead of others.
    mutating func delivered(signed: Int, reads: Int) {
        statistics.signedBatches += signed
        statistics.reads += reads
    }

    /// The reader has read `feed` up to `cursor`.
    mutating func read(_ feed: any TopicReader, upTo cursor: Int64?) {
        entries[ObjectIdentifier(feed)]?.hints.read(upTo: cursor)
    }
}
