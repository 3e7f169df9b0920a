/// Where a `PostgresReplaySubject`'s listener stands, as its `connectionState` signal tells it.
///
/// The usual path is `connecting → catchingUp → live`; a lost connection goes
/// `disconnected(error) → connecting → catchingUp → live`, and the subject catches up from the
/// last value it delivered. `stopped` is last: after a graceful shutdown or cancellation of
/// `run()`, or after retention trimmed values it missed under `MissedValuesPolicy.fail`.
///
///     feed.connectionState.subscribeNext { state in
///         if case .disconnected(let error) = state { logger.warning("feed down: \(error)") }
///     }
public enum ConnectionState: Sendable, CustomStringConvertible {
    /// `run()` has not started yet.
    case idle
    /// Opening the listener connection.
    case connecting
    /// Listening, and reading the values committed since the last one delivered (or the
    /// retained tail, the first time).
    case catchingUp
    /// Caught up: every value committed from now on arrives as it is committed.
    case live
    /// The listener connection failed with this error; it reconnects after a short backoff —
    /// unless the error is permanent (`PostgresReplayError.refused`, `.schemaMissing`): then
    /// `stopped` follows and `run()` throws it.
    case disconnected(any Error)
    /// `run()` has returned: subscribers have received their terminal event.
    case stopped

    /// The state's name, with the error for `disconnected`: for an error from the server, its
    /// message and SQLSTATE (postgres-nio's own description of `PSQLError` hides them), for
    /// example `disconnected: permission denied for table ripple_values (SQLSTATE 42501)`.
    public var description: String {
        switch self {
        case .idle: "idle"
        case .connecting: "connecting"
        case .catchingUp: "catching up"
        case .live: "live"
        case .disconnected(let error): "disconnected: \(Untrusted.describe(error))"
        case .stopped: "stopped"
        }
    }

    /// Whether this is `live`.
    public var isLive: Bool {
        if case .live = self { return true }
        return false
    }
}

/// What a `PostgresReplaySubject` does when retention trimmed values before this instance read
/// them (it was away longer than `capacity` values or `maxAge` allow), or a stored value cannot be
/// decoded as `Value`.
///
/// Never silence: `.fail` ends every subscription with `PostgresReplayError.missedValues`;
/// `.skip` goes on with the next retained value, logs a warning and sends the gap on
/// `missedValues`.
public enum MissedValuesPolicy: Sendable {
    /// Subscribers receive `PostgresReplayError.missedValues`, and `run()` throws it.
    case fail
    /// Subscribers go on with the next value; the gap is sent on `missedValues` and logged.
    case skip
}

/// Values of a topic this instance will never deliver.
public struct MissedValues: Sendable, Equatable, CustomStringConvertible {
    /// Why they are missed.
    public enum Reason: Sendable, Equatable {
        /// Retention (`capacity` or `maxAge`) deleted them before this instance read them.
        case trimmed
        /// The stored JSON does not decode as `Value` (written by another version of the type).
        case undecodable(String)
    }
    /// The topic.
    public var topic: String
    /// Their sequences in the topic's order.
    public var sequences: ClosedRange<Int64>
    /// Why.
    public var reason: Reason

    /// For example `orders: values 12...40 trimmed by retention before this instance read them`.
    public var description: String {
        switch reason {
        case .trimmed:
            "\(Untrusted.escaped(topic, limit: 300)): values \(sequences) trimmed by retention before this instance read them"
        case .undecodable(let why):
            // The decoder's message can quote keys of the row's JSON: escaped and bounded.
            "\(Untrusted.escaped(topic, limit: 300)): value \(sequences.lowerBound) does not decode: \(Untrusted.escaped(why, limit: 300))"
        }
    }
}

/// Errors of a `PostgresReplaySubject`.
public enum PostgresReplayError: Error, Sendable, CustomStringConvertible {
    /// Values this instance will never deliver (under `MissedValuesPolicy.fail`).
    case missedValues(MissedValues)
    /// `run()` was called a second time (while running or after it returned): a subject runs once.
    case alreadyRunning(topic: String)
    /// A notification or row that is not what this package writes.
    case malformed(String)
    /// `resumingAfter:` (or the cursor after a reconnect) is past the topic's last value: the
    /// topic was reset, the database restored from a backup, or the cursor belongs to another
    /// database. Ends the subject whatever the `MissedValuesPolicy`: nothing after such a cursor
    /// can be trusted. Start again without `resumingAfter:`.
    case cursorAhead(topic: String, cursor: Int64, head: Int64)
    /// `send` after `run()` returned: the subject is stopped.
    case stopped(topic: String)
    /// The server refused in a way reconnecting will not fix: no privilege on the tables
    /// (SQLSTATE 42501), a missing table (42P01), a database that does not exist (3D000), or
    /// failed authentication (28xxx). Ends `run()`, with the server's message.
    case refused(sqlState: String, message: String)
    /// The tables do not exist and `PostgresTopics.SchemaPolicy.mustExist` forbids creating
    /// them: run `PostgresTopics.migrate(configuration:logger:)` or `ripple-feed migrate` first.
    case schemaMissing

    /// A sentence naming the problem.
    public var description: String {
        switch self {
        case .missedValues(let missed): "missed values: \(missed)"
        case .alreadyRunning(let topic): "PostgresReplaySubject(topic: \(Untrusted.escaped(topic, limit: 300))).run() was called twice: a subject runs once"
        case .malformed(let what): "malformed: \(Untrusted.escaped(what, limit: 500))"
        case .cursorAhead(let topic, let cursor, let head):
            "\(Untrusted.escaped(topic, limit: 300)): the cursor \(cursor) is past the topic's last value \(head) (topic reset, database restored, or another database's cursor)"
        case .stopped(let topic): "PostgresReplaySubject(topic: \(Untrusted.escaped(topic, limit: 300))) is stopped: run() has returned"
        case .refused(let sqlState, let message): "the database refused: \(Untrusted.escaped(message, limit: 500)) (SQLSTATE \(sqlState))"
        case .schemaMissing:
            "the tables ripple_topics and ripple_values do not exist: run PostgresTopics.migrate(configuration:logger:) or `ripple-feed migrate` first"
        }
    }

    /// Whether the error ends the subject (rather than the connection, which is retried).
    var endsTheSubject: Bool {
        switch self {
        case .missedValues, .cursorAhead, .refused, .schemaMissing: true
        case .alreadyRunning, .malformed, .stopped: false
        }
    }
}

/// Why a topic cannot be used (`PostgresReplaySubject.validate(topic:)`).
///
/// A topic is the primary key's first column: PostgreSQL's btree refuses index rows over about
/// 2,700 bytes, so a topic of 3 KB made `send` fail while followers went live. 256 bytes leaves
/// room to spare and is more than any name needs.
///
///     do { try PostgresReplaySubject<Order>.validate(topic: input) }
///     catch { print(error) }   // a topic is at most 256 bytes of UTF-8, this one has 3000
public enum InvalidTopic: Error, Sendable, Equatable, CustomStringConvertible {
    /// The empty string.
    case empty
    /// A NUL character (PostgreSQL's text cannot hold one).
    case containsNul
    /// More than `PostgresReplaySubject.maximumTopicBytes` bytes of UTF-8.
    case tooLong(bytes: Int)

    /// For example `a topic is at most 256 bytes of UTF-8, this one has 3000`.
    public var description: String {
        switch self {
        case .empty: "a topic must not be empty"
        case .containsNul: "a topic must not contain a NUL character"
        case .tooLong(let bytes): "a topic is at most 256 bytes of UTF-8, this one has \(bytes)"
        }
    }
}
