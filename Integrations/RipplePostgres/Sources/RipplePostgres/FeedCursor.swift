/// Where one instance stands in a topic's global order, and what to do with what arrives: the
/// pure state machine behind `PostgresReplaySubject`'s listener (testable without a database).
///
/// Invariants:
/// - `last` only grows: a value is delivered only if its sequence is `last + 1`, so every value is
///   delivered at most once, in sequence order.
/// - Sequences are gapless per topic (the topic row's counter, incremented under its row lock in
///   the publishing transaction: a rolled-back publish gives its number back). So a value that
///   is missing when a later one is visible was trimmed by retention, and is reported, never
///   skipped in silence.
struct FeedCursor: Equatable {
    /// The sequence of the last value delivered, or nil before the first catch-up.
    private(set) var last: Int64?

    init(resumingAfter last: Int64?) {
        self.last = last
    }

    /// Values missed between `last` and a later value: retention trimmed them.
    struct Missed: Equatable, Sendable {
        /// The sequences that will never be delivered.
        var sequences: ClosedRange<Int64>
    }

    /// What to do with the rows of a catch-up, in order.
    enum Step: Equatable {
        /// Deliver the row at this index.
        case deliver(Int)
        /// These values will never come: report them, then go on.
        case missed(Missed)
        /// The cursor is ahead of the topic's head: the topic was reset, the database restored
        /// from a backup, or the cursor belongs to another database. Nothing after it can be
        /// trusted: fail.
        case cursorAhead(head: Int64)
    }

    /// Takes rows read after `last` (ascending by sequence), and the topic's head read *before*
    /// them. Returns what to do, in order: each row after `last` is delivered, and every hole
    /// before a row (or before `head`, when nothing newer is retained) is reported as missed.
    /// Retention only ever deletes a prefix, so a hole is normally at the front; a hole in the
    /// middle (rows removed by hand) is reported the same way, never skipped in silence.
    ///
    /// Sequences come from the table, so from any role that may write it: one at or past
    /// `largestSequence` (which no publisher reaches, at a million values a second, in 290,000
    /// years) is ignored, and a head there counts as `largestSequence`, so no arithmetic here
    /// can overflow whatever a row says.
    mutating func accept(rows: [Int64], headBefore head: Int64) -> [Step] {
        let head = min(head, Self.largestSequence)
        let start = last ?? 0
        if head < start { return [.cursorAhead(head: head)] }
        var steps: [Step] = []
        var expected = start + 1
        for (index, sequence) in rows.enumerated() where sequence >= expected && sequence <= Self.largestSequence {
            if sequence > expected { steps.append(.missed(Missed(sequences: expected...(sequence - 1)))) }
            steps.append(.deliver(index))
            expected = sequence + 1
        }
        if expected <= head, !steps.contains(where: { if case .deliver = $0 { true } else { false } }) {
            steps.append(.missed(Missed(sequences: expected...head)))
            expected = head + 1
        }
        last = expected - 1
        return steps
    }

    /// Takes a batch of `count` values starting at `first` (a signed notification's, already
    /// checked): accepted, and `last` moves to its end, only if it follows `last` exactly. A
    /// batch that leaves a gap, overlaps what was delivered, or reaches `largestSequence` is
    /// refused: the caller reads the table instead.
    mutating func accept(batchFrom first: Int64, count: Int) -> Bool {
        guard let last, count >= 1, first == last + 1,
              Int64(count) <= Self.largestSequence - last else { return false }
        self.last = last + Int64(count)
        return true
    }

    /// Takes a new instance's first catch-up: the topic's head and the retained tail it chose to
    /// replay (ascending). Nothing before the tail counts as missed: a new instance starts there.
    mutating func start(head: Int64, tail: [Int64]) {
        precondition(last == nil, "FeedCursor.start: already started at \(last!)")
        last = min(max(head, tail.last ?? 0), Self.largestSequence)
    }

    /// The largest sequence the cursor accepts (see `accept(rows:headBefore:)`).
    static var largestSequence: Int64 { Int64.max - 1 }
}

