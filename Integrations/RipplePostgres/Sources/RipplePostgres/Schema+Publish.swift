import PostgresNIO

extension Schema {
    /// Publishes a batch of values to one topic in one statement; returns the topic's new head
    /// (the last value's sequence: the batch holds `head - n + 1 … head`, in the order given).
    /// A prepared statement (planned once per connection: the plan costs more than running it).
    ///
    /// `head = head + n` takes the topic row's lock and the batch's sequences at once, and the
    /// time under the lock (`greatest(clock_timestamp(), last_at)`: never behind the previous
    /// value's), so `created_at` grows with `seq` and an age cut is always a prefix. One
    /// `INSERT … SELECT … unnest($2) WITH ORDINALITY` stores the values, and one `pg_notify`
    /// carries the new head as decimal text and nothing else: a listener reads the values from
    /// the table, so a notification is only a hint.
    ///
    /// Trimming is done by the batch that crosses a multiple of 16 sequences (count: the rows
    /// beyond `capacity`) or of 64 (age: a range scan of the topic's rows); the statement's
    /// snapshot does not see its own rows, so between trims the table keeps at most
    /// `capacity + 15` values (more only when one batch is larger than `capacity`). Readers never
    /// replay more than `capacity`.
    struct Publish: PostgresPreparedStatement {
        static let name = "ripple_publish_v2"
        static let sql = """
            WITH next AS (
                INSERT INTO ripple_topics AS t (topic, head, last_at)
                VALUES ($1, cardinality($2::text[]), clock_timestamp())
                ON CONFLICT (topic) DO UPDATE
                    SET head = t.head + cardinality($2::text[]), last_at = greatest(clock_timestamp(), t.last_at)
                RETURNING head, last_at
            ), stored AS (
                INSERT INTO ripple_values (topic, seq, created_at, payload)
                SELECT $1, next.head - cardinality($2::text[]) + v.ordinality, next.last_at, v.payload
                FROM next, unnest($2::text[]) WITH ORDINALITY AS v(payload, ordinality)
            ), by_count AS (
                DELETE FROM ripple_values
                WHERE (SELECT head / 16 > (head - cardinality($2::text[])) / 16 FROM next)
                  AND topic = $1 AND seq <= (SELECT head FROM next) - $3
            ), by_age AS (
                DELETE FROM ripple_values
                WHERE $4::float8 IS NOT NULL
                  AND (SELECT head / 64 > (head - cardinality($2::text[])) / 64 FROM next)
                  AND topic = $1 AND created_at < now() - make_interval(secs => $4::float8)
            )
            SELECT head, pg_notify($5, head::text)::text FROM next
            """
        static let bindingDataTypes: [PostgresDataType] = [.text, .textArray, .int8, .float8, .text]
        typealias Row = Int64

        var topic: String
        var channel: String
        var values: [String]
        var capacity: Int
        var maxAge: Duration?

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 5)
            bindings.append(topic)
            bindings.append(values)
            bindings.append(Int64(capacity))
            bindings.append(maxAge.map(\.seconds))
            bindings.append(channel)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int64 {
            try row.makeRandomAccess()[0].decode(Int64.self)
        }
    }
}
