/// What the listener knows about one topic between reads: the pure state machine that turns
/// notifications into reads of the table (testable without a database).
///
/// A notification is only a hint: any role that can connect may send one, so it never carries a
/// value, and what it says decides only whether to read. Its payload is the decimal sequence of
/// the last value a transaction committed to the topic. A sequence at or below the cursor costs
/// nothing; anything else — a later sequence, a malformed or forged payload — asks for a read.
/// Reads are coalesced: at most one is queued per topic, and hints arriving while it is queued
/// change nothing, so a flood of hints costs at most one read after the one in flight, and no
/// memory.
struct TopicHints: Equatable, Sendable {
    /// The sequence of the last value read, or nil before the first read.
    private(set) var cursor: Int64?
    /// A read is queued (not yet taken by the reader).
    private(set) var queued = false
    /// Read from the start on this connection (false until the topic's first read after LISTEN).
    private(set) var caughtUp = false

    /// Starts at `cursor` (`resumingAfter:`), or nil for a new instance.
    init(cursor: Int64? = nil) {
        self.cursor = cursor
    }

    /// What a hint does.
    enum Outcome: Equatable, Sendable {
        /// At or below the cursor: nothing to do.
        case stale
        /// Queue a read (and wake the reader).
        case queue
        /// A read is already queued: nothing more.
        case coalesced
    }

    /// Takes a notification's payload; `rejected` says it was not a well-formed sequence.
    mutating func hint(_ payload: String) -> (outcome: Outcome, rejected: Bool) {
        let sequence = Self.sequence(in: payload)
        if let sequence, let cursor, sequence <= cursor { return (.stale, false) }
        return (want(), sequence == nil)
    }

    /// Asks for a read; `.queue` when the caller must queue the topic for the reader.
    mutating func want() -> Outcome {
        if queued { return .coalesced }
        queued = true
        return .queue
    }

    /// The reader takes the queued read: hints from now on queue another one.
    mutating func take() {
        queued = false
    }

    /// The reader has read up to `cursor`.
    mutating func read(upTo cursor: Int64?) {
        self.cursor = cursor
        caughtUp = true
    }

    /// A new connection: the topic must be read from its cursor before hints mean anything.
    mutating func reconnected() {
        caughtUp = false
        queued = false
    }

    /// A payload's sequence: 1 to 19 ASCII digits and nothing else, fitting `Int64`; nil
    /// otherwise. Looks at no more than the first 20 bytes.
    static func sequence(in payload: String) -> Int64? {
        var value: Int64 = 0
        var digits = 0
        for byte in payload.utf8 {
            digits += 1
            guard digits <= 19, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = shifted.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return digits == 0 ? nil : value
    }
}
