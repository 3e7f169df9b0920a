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
/// One batch of publishes to a topic is one statement (`Schema.Publish`, in Schema+Publish.swift):
/// it adds the batch's size to the topic's `head` under the row's lock and takes the time there too
/// (`greatest(clock_timestamp(), last_at)`: never behind the previous value's, even if the server's
/// clock steps back), so `created_at` grows with `seq` and an age cut is always a prefix; it inserts
/// the values with those sequences, trims what retention lets go, and queues one notification (the
/// new head). The lock is held until commit, and PostgreSQL queues a transaction's notifications
/// before it releases its locks, so sequence order, commit order and notification order are one
/// order (see the package README).
enum Schema {
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
                  AND (\(maxAgeSeconds)::float8 IS NULL OR created_at >= now() - pg_catalog.make_interval(secs => \(maxAgeSeconds)))
                ORDER BY seq DESC LIMIT \(Int64(limit))
            ) AS v ON true
            """
    }

    /// In one snapshot: the topic's head, the database's clock, and up to `limit` retained values
    /// after `sequence`, ascending, none older than `maxAge` (one row with nulls when there are
    /// none). One query per read: a head with nothing retained after the cursor means the values
    /// were trimmed.
    ///
    /// A page also ends once it holds `bytes` of JSON (it always holds at least one value): a
    /// read of many large values would otherwise keep the connection busy past the heartbeat,
    /// whose probe waits behind it — the connection would be closed, and the same read would
    /// start again, for ever. A page that stopped at either bound is followed by another read.
    static func after(topic: String, sequence: Int64, limit: Int, bytes: Int, maxAge: Duration?) -> PostgresQuery {
        let maxAgeSeconds = maxAge.map(\.seconds)
        return """
            SELECT coalesce((SELECT head FROM ripple_topics WHERE topic = \(topic)), 0),
                   extract(epoch FROM clock_timestamp())::float8,
                   v.seq, extract(epoch FROM v.created_at)::float8, v.payload
            FROM (SELECT 1) AS one
            LEFT JOIN LATERAL (
                SELECT seq, created_at, payload FROM (
                    SELECT seq, created_at, payload,
                           sum(pg_catalog.octet_length(payload)) OVER (ORDER BY seq) - pg_catalog.octet_length(payload) AS before
                    FROM (
                        SELECT seq, created_at, payload FROM ripple_values
                        WHERE topic = \(topic) AND seq > \(sequence)
                          AND (\(maxAgeSeconds)::float8 IS NULL OR created_at >= now() - pg_catalog.make_interval(secs => \(maxAgeSeconds)))
                        ORDER BY seq LIMIT \(Int64(limit))
                    ) AS page
                ) AS sized
                WHERE before < \(Int64(bytes))
                ORDER BY seq
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
            "SELECT pg_catalog.to_regclass('ripple_topics') IS NOT NULL AND pg_catalog.to_regclass('ripple_values') IS NOT NULL",
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
                PERFORM pg_catalog.pg_advisory_xact_lock(74122026);
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
