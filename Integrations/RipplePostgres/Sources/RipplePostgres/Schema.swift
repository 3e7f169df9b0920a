import Logging
import PostgresNIO

/// The tables every instance shares, and the statements that read and write them.
///
/// ```sql
/// ripple_topics (topic text PRIMARY KEY, head bigint, last_at timestamptz)  -- the last sequence and time given out
/// ripple_values (topic text, seq bigint, created_at timestamptz, payload text,
///                PRIMARY KEY (topic, seq))                      -- the retained values, JSON
/// ```
///
/// One publish is one statement, so one transaction: it increments the topic's `head` under the
/// row's lock and takes the time there too (`greatest(clock_timestamp(), last_at)`: never behind
/// the previous value's, even if the server's clock steps back), so `created_at` grows with `seq`
/// and an age cut is always a prefix; it inserts the value with that sequence, trims what
/// retention lets go, and queues the notification. The lock is held until commit, and PostgreSQL queues a transaction's
/// notifications before it releases its locks, so sequence order, commit order and notification
/// order are one order (see the package README).
enum Schema {
    /// The largest JSON sent inside a notification; larger values are read from the table.
    /// NOTIFY refuses payloads of 8,000 bytes or more, and the sequence and time come first.
    static let inlineLimit = 7_900

    /// Publishes one value; returns its sequence. A prepared statement (planned once per
    /// connection: the plan of this statement costs more than running it).
    ///
    /// Trimming is done by the publisher of every 16th value (count: the rows beyond `capacity`,
    /// so at most `capacity + 15` are kept) and every 64th (age: a range scan of the topic's rows);
    /// readers never replay more than `capacity`, and an instance resuming with a cursor gets
    /// every row still kept after it.
    struct Publish: PostgresPreparedStatement {
        static let name = "ripple_publish_v1"
        static let sql = """
            WITH next AS (
                INSERT INTO ripple_topics AS t (topic, head, last_at) VALUES ($1, 1, clock_timestamp())
                ON CONFLICT (topic) DO UPDATE
                    SET head = t.head + 1, last_at = greatest(clock_timestamp(), t.last_at)
                RETURNING head, last_at
            ), stored AS (
                INSERT INTO ripple_values (topic, seq, created_at, payload)
                SELECT $1, head, last_at, $2 FROM next
                RETURNING seq, created_at
            ), by_count AS (
                DELETE FROM ripple_values
                WHERE (SELECT head FROM next) % 16 = 0
                  AND topic = $1 AND seq <= (SELECT head FROM next) - $3
            ), by_age AS (
                DELETE FROM ripple_values
                WHERE $4::float8 IS NOT NULL AND (SELECT head FROM next) % 64 = 0
                  AND topic = $1 AND created_at < now() - make_interval(secs => $4::float8)
            )
            SELECT seq, pg_notify($5,
                seq::text || ' ' || extract(epoch FROM created_at)::text
                || CASE WHEN $6 THEN ' ' || $2 ELSE '' END)::text
            FROM stored
            """
        static let bindingDataTypes: [PostgresDataType] = [.text, .text, .int8, .float8, .text, .bool]
        typealias Row = Int64

        var topic: String
        var channel: String
        var json: String
        var capacity: Int
        var maxAge: Duration?

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 6)
            bindings.append(topic)
            bindings.append(json)
            bindings.append(Int64(capacity))
            bindings.append(maxAge.map(\.seconds))
            bindings.append(channel)
            bindings.append(json.utf8.count <= Schema.inlineLimit)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int64 {
            try row.makeRandomAccess()[0].decode(Int64.self)
        }
    }

    /// A new instance's first read, in one snapshot: the topic's head and the retained tail
    /// (at most `limit` values, none older than `maxAge`), newest first, and the database's clock.
    static func tail(topic: String, limit: Int, maxAge: Duration?) -> PostgresQuery {
        let maxAgeSeconds = maxAge.map(\.seconds)
        return """
            SELECT coalesce((SELECT head FROM ripple_topics WHERE topic = \(topic)), 0),
                   extract(epoch FROM clock_timestamp())::float8,
                   v.seq, extract(epoch FROM v.created_at)::float8, v.payload
            FROM (SELECT 1) AS one
            LEFT JOIN LATERAL (
                SELECT seq, created_at, payload FROM ripple_values
                WHERE topic = \(topic)
                  AND (\(maxAgeSeconds)::float8 IS NULL OR created_at >= now() - make_interval(secs => \(maxAgeSeconds)))
                ORDER BY seq DESC LIMIT \(Int64(limit))
            ) AS v ON true
            """
    }

    /// In one snapshot: the topic's head, the database's clock, and up to `limit` retained values
    /// after `sequence`, ascending, none older than `maxAge` (one row with nulls when there are
    /// none). One query per read: a head with nothing retained after the cursor means the values
    /// were trimmed.
    static func after(topic: String, sequence: Int64, limit: Int, maxAge: Duration?) -> PostgresQuery {
        let maxAgeSeconds = maxAge.map(\.seconds)
        return """
            SELECT coalesce((SELECT head FROM ripple_topics WHERE topic = \(topic)), 0),
                   extract(epoch FROM clock_timestamp())::float8,
                   v.seq, extract(epoch FROM v.created_at)::float8, v.payload
            FROM (SELECT 1) AS one
            LEFT JOIN LATERAL (
                SELECT seq, created_at, payload FROM ripple_values
                WHERE topic = \(topic) AND seq > \(sequence)
                  AND (\(maxAgeSeconds)::float8 IS NULL OR created_at >= now() - make_interval(secs => \(maxAgeSeconds)))
                ORDER BY seq LIMIT \(Int64(limit))
            ) AS v ON true
            """
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

extension Schema {
    /// Makes sure the tables exist before a connection uses them. First a plain query
    /// (`to_regclass`, which needs no privilege): when both tables exist, nothing else runs, so a
    /// role with SELECT only (or the writes only) never runs DDL. When one is missing:
    /// `createIfMissing` creates them (`migrate(on:logger:)`), otherwise this throws
    /// `PostgresReplayError.schemaMissing`, which ends `run()`: follow a migration, do not retry.
    ///
    ///     try await Schema.prepare(on: connection, createIfMissing: false, logger: logger)
    static func prepare(on connection: PostgresConnection, createIfMissing: Bool, logger: Logger) async throws {
        var exists = false
        for try await row in try await connection.query(
            "SELECT to_regclass('ripple_topics') IS NOT NULL AND to_regclass('ripple_values') IS NOT NULL",
            logger: logger)
        {
            exists = try row.decode(Bool.self)
        }
        if exists { return }
        guard createIfMissing else { throw PostgresReplayError.schemaMissing }
        try await migrate(on: connection, logger: logger)
    }

    /// Creates the tables if missing (`prepare(on:createIfMissing: true, logger:)`).
    static func ensure(on connection: PostgresConnection, logger: Logger) async throws {
        try await prepare(on: connection, createIfMissing: true, logger: logger)
    }

    /// Creates the tables if missing. Concurrent `CREATE TABLE IF NOT EXISTS` from several
    /// instances can still collide in PostgreSQL's catalog, so the block takes a transaction-level
    /// advisory lock first. When the tables exist it locks nothing else: no `ALTER TABLE` here,
    /// whose exclusive lock would queue every publisher behind any reader of the table.
    static func migrate(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            DO $$ BEGIN
                PERFORM pg_advisory_xact_lock(74122026);
                CREATE TABLE IF NOT EXISTS ripple_topics (
                    topic text PRIMARY KEY,
                    head bigint NOT NULL,
                    last_at timestamptz NOT NULL DEFAULT '-infinity'
                );
                CREATE TABLE IF NOT EXISTS ripple_values (
                    topic text NOT NULL,
                    seq bigint NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    payload text NOT NULL,
                    PRIMARY KEY (topic, seq)
                );
            END $$
            """, logger: logger)
    }
}
