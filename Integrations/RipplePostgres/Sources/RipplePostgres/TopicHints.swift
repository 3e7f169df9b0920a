/// What the listener knows about one topic between reads: the pure state machine that turns
/// notifications into work for the reader — reads of the table, or signed batches to deliver
/// (testable without a database).
///
/// A notification is untrusted: any role that can connect may send one. A plain one (or one
/// that is not checked) is only a hint, and what it says decides only whether to read: its
/// payload starts with the decimal sequence of the last value a transaction committed to the
/// topic; a sequence at or below the cursor costs nothing; anything else — a later sequence, a
/// malformed or forged payload — asks for a read. A signed batch whose signature the listener
/// checked (`offer`) is queued to be delivered as it is, without a read.
///
/// Invariants:
/// - The topic is in the reader's queue at most once (`queued`), so a flood of hints costs at
///   most one read after the one in flight, and no memory.
/// - `inline` holds signed batches only while no read is wanted (a read delivers everything
///   committed, batches included), only after the topic's catch-up on this connection, at most
///   `maximumInline` of them, and within the bytes the router allows: memory stays bounded.
/// - The reader checks each batch against its own cursor (`FeedCursor.accept(batchFrom:count:)`):
///   one that does not follow the last value delivered becomes a read, so nothing here can make
///   a value delivered twice or out of order.
struct TopicHints: Equatable, Sendable {
    /// The sequence of the last value read, or nil before the first read.
    private(set) var cursor: Int64?
    /// The topic is in the reader's queue (a read, or batches, not yet taken).
    private(set) var queued = false
    /// The queued work is a read.
    private(set) var wantsRead = false
    /// Checked signed batches to deliver, in notification order (only while `!wantsRead`).
    private(set) var inline: [SignedValues] = []
    /// The bytes of JSON in `inline`.
    private(set) var inlineBytes = 0
    /// Read from the start on this connection (false until the topic's first read after LISTEN).
    private(set) var caughtUp = false

    /// The most batches queued for one topic: more become one read.
    static let maximumInline = 64

    /// Starts at `cursor` (`resumingAfter:`), or nil for a new instance.
    init(cursor: Int64? = nil) {
        self.cursor = cursor
    }

    /// What a hint does.
    enum Outcome: Equatable, Sendable {
        /// At or below the cursor: nothing to do.
        case stale
        /// Queue the topic (and wake the reader).
        case queue
        /// The topic is already queued: nothing more.
        case coalesced
    }

    /// What the reader takes.
    enum Work: Equatable, Sendable {
        case read
        case deliver([SignedValues])
    }

    /// Takes a notification's payload as a hint; `rejected` says it was not well formed.
    mutating func hint(_ payload: String) -> (outcome: Outcome, rejected: Bool) {
        let last = NotificationPayload(payload).last
        return (hint(last: last), last == nil)
    }

    /// A hint that the topic's last value is `last` (nil: unknown, read to find out).
    mutating func hint(last: Int64?) -> Outcome {
        if let last, let cursor, last <= cursor { return .stale }
        return want()
    }

    /// A signed batch whose signature was checked, with at most `room` more bytes allowed.
    mutating func offer(_ batch: SignedValues, room: Int) -> Outcome {
        if let cursor, batch.last <= cursor { return .stale }
        if !caughtUp || wantsRead || inline.count >= Self.maximumInline || batch.body.utf8.count > room {
            return want()
        }
        inline.append(batch)
        inlineBytes += batch.body.utf8.count
        return enqueue()
    }

    /// Asks for a read (dropping queued batches: the read covers them); `.queue` when the caller
    /// must queue the topic for the reader.
    mutating func want() -> Outcome {
        wantsRead = true
        inline = []
        inlineBytes = 0
        return enqueue()
    }

    private mutating func enqueue() -> Outcome {
        if queued { return .coalesced }
        queued = true
        return .queue
    }

    /// The reader takes the queued work: hints from now on queue more.
    @discardableResult
    mutating func take() -> Work {
        defer {
            queued = false
            wantsRead = false
            inline = []
            inlineBytes = 0
        }
        return wantsRead || inline.isEmpty ? .read : .deliver(inline)
    }

    /// The reader has read (or delivered) up to `cursor`.
    mutating func read(upTo cursor: Int64?) {
        self.cursor = cursor
        caughtUp = true
    }

    /// A new connection: the topic must be read from its cursor before hints mean anything.
    mutating func reconnected() {
        caughtUp = false
        queued = false
        wantsRead = false
        inline = []
        inlineBytes = 0
    }

    /// A payload's sequence: 1 to 19 ASCII digits and nothing else, fitting `Int64`; nil
    /// otherwise.
    static func sequence(in payload: String) -> Int64? {
        NotificationPayload.sequence(payload[...])
    }
}

/// A signed batch checked against the key, ready for the reader: the values `first … last`,
/// committed at `epoch`, as one JSON array.
struct SignedValues: Equatable, Sendable {
    var first: Int64
    var last: Int64
    var epoch: Double
    var body: Substring

    init(_ batch: NotificationPayload.SignedBatch) {
        first = batch.first
        last = batch.last
        epoch = batch.epoch
        body = batch.body
    }
}
