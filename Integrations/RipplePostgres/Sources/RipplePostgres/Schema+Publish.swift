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
    /// carries the new head as decimal text: a hint, on which a listener reads the values from
    /// the table. With a `NotificationKey` (`signed`), the notification carries the batch too,
    /// signed inside the statement (the server gives out the sequences, so only it knows what to
    /// sign): `HEAD COUNT EPOCH MAC BODY`, where `BODY` is `$6` (the values as one JSON array) and
    /// `MAC` is `sha256($7 || sha256($8 || message))` — HMAC-SHA256 from the key's pad blocks —
    /// of the message `NotificationPayload.SignedBatch.message(topic:)` describes.
    ///
    /// Trimming is done by the batch that crosses a multiple of 16 sequences (count: the rows
    /// beyond `capacity`) or of 64 (age: a range scan of the topic's rows); the statement's
    /// snapshot does not see its own rows, so between trims the table keeps at most
    /// `capacity + 15` values (more only when one batch is larger than `capacity`). Readers never
    /// replay more than `capacity`.
    ///
    /// Every function a better-matching signature could shadow is named with its schema
    /// (`pg_catalog.`): a role that may create functions
    /// in a schema on the search path (`public`, before PostgreSQL 15) could otherwise shadow one
    /// with a better-matching signature (`cardinality(text[])` over `cardinality(anyarray)`) and
    /// run its code as the publisher. Operators and constructs (`||`, `greatest`, `extract`) are
    /// exact matches in `pg_catalog`, which is searched first.
    struct Publish: PostgresPreparedStatement {
        static let name = "ripple_publish_v3"
        static let sql = """
            WITH next AS (
                INSERT INTO ripple_topics AS t (topic, head, last_at)
                VALUES ($1, pg_catalog.cardinality($2::text[]), clock_timestamp())
                ON CONFLICT (topic) DO UPDATE
                    SET head = t.head + pg_catalog.cardinality($2::text[]), last_at = greatest(clock_timestamp(), t.last_at)
                RETURNING head, last_at
            ), stored AS (
                INSERT INTO ripple_values (topic, seq, created_at, payload)
                SELECT $1, next.head - pg_catalog.cardinality($2::text[]) + v.ordinality, next.last_at, v.payload
                FROM next, pg_catalog.unnest($2::text[]) WITH ORDINALITY AS v(payload, ordinality)
            ), by_count AS (
                DELETE FROM ripple_values
                WHERE (SELECT head / 16 > (head - pg_catalog.cardinality($2::text[])) / 16 FROM next)
                  AND topic = $1 AND seq <= (SELECT head FROM next) - $3
            ), by_age AS (
                DELETE FROM ripple_values
                WHERE $4::float8 IS NOT NULL
                  AND (SELECT head / 64 > (head - pg_catalog.cardinality($2::text[])) / 64 FROM next)
                  AND topic = $1 AND created_at < now() - pg_catalog.make_interval(secs => $4::float8)
            ), announced AS (
                SELECT head, head::text || ' ' || pg_catalog.cardinality($2::text[])::text || ' ' || extract(epoch FROM last_at)::text AS header
                FROM next
            ), signed AS (
                SELECT head, CASE WHEN $6::text IS NULL OR $7::bytea IS NULL OR $8::bytea IS NULL THEN NULL
                    ELSE header || ' ' || pg_catalog.encode(pg_catalog.sha256($7::bytea || pg_catalog.sha256($8::bytea
                        || pg_catalog.convert_to('ripple-v1', 'UTF8') || pg_catalog.decode('00', 'hex') || pg_catalog.convert_to($1, 'UTF8') || pg_catalog.decode('00', 'hex')
                        || pg_catalog.convert_to(header, 'UTF8') || pg_catalog.decode('00', 'hex') || pg_catalog.convert_to($6::text, 'UTF8'))), 'hex')
                        || ' ' || $6::text
                    END AS payload
                FROM announced
            )
            SELECT head, pg_catalog.pg_notify($5,
                CASE WHEN pg_catalog.octet_length(payload) < pg_catalog.current_setting('block_size')::int - 192 THEN payload ELSE head::text END)::text
            FROM signed
            """
        static let bindingDataTypes: [PostgresDataType] = [.text, .textArray, .int8, .float8, .text, .text, .bytea, .bytea]
        typealias Row = Int64

        var topic: String
        var channel: String
        var values: [String]
        var capacity: Int
        var maxAge: Duration?
        /// Signs the notification and puts the values in it; nil sends a bare hint.
        var key: NotificationKey?

        /// The most bytes of JSON a signed notification carries: PostgreSQL refuses a payload of
        /// 8,000 bytes or more (less with smaller blocks), and the header and signature take at
        /// most about 125. The statement checks the payload's bytes in the server's encoding
        /// too, and sends a bare hint when it would not fit.
        static let signedBodyBytes = 7_700

        /// The values as one JSON array, if a key signs them and they fit a notification.
        var body: String? {
            guard key != nil else { return nil }
            var bytes = 2 + max(0, values.count - 1)
            for value in values {
                bytes += value.utf8.count
                if bytes > Self.signedBodyBytes { return nil }
            }
            return "[" + values.joined(separator: ",") + "]"
        }

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 8)
            bindings.append(topic)
            bindings.append(values)
            bindings.append(Int64(capacity))
            bindings.append(maxAge.map(\.seconds))
            bindings.append(channel)
            let body = self.body
            bindings.append(body)
            bindings.append(body == nil ? nil : key.map { ByteBuffer(bytes: $0.outerPad) })
            bindings.append(body == nil ? nil : key.map { ByteBuffer(bytes: $0.innerPad) })
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int64 {
            try row.makeRandomAccess()[0].decode(Int64.self)
        }
    }
}
