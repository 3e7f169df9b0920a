import Testing

@testable import RipplePostgres

/// The reader's state machine, without a database.
@Suite struct FeedCursorTests {
    /// Sequences come from the table, which any role that may write it can set: the largest
    /// `Int64` in a row or a head must not trap the follower's arithmetic.
    @Test func sequencesAtTheEndOfInt64CrashNothing() {
        var fresh = FeedCursor(resumingAfter: nil)
        fresh.start(head: .max, tail: [.max])
        #expect(fresh.last == FeedCursor.largestSequence)
        _ = fresh.accept(rows: [.max], headBefore: .max)
        #expect(fresh.last == FeedCursor.largestSequence)
        var running = FeedCursor(resumingAfter: 4)
        let steps = running.accept(rows: [5, .max], headBefore: .max)
        #expect(steps == [.deliver(0)], "the row at Int64.max is ignored")
        #expect(running.last == 5)
        #expect(running.accept(rows: [.max], headBefore: .max) == [.missed(FeedCursor.Missed(sequences: 6...FeedCursor.largestSequence))],
                "a head at Int64.max reads as a (huge) gap, reported, not a trap")
        #expect(running.accept(rows: [.max], headBefore: .max) == [])
    }

    @Test func rowsFollowingTheCursorAreDeliveredWithoutAGap() {
        var cursor = FeedCursor(resumingAfter: 4)
        #expect(cursor.accept(rows: [3, 4, 5, 6], headBefore: 6) == [.deliver(2), .deliver(3)])
        #expect(cursor.last == 6)
    }

    @Test func rowsStartingAfterTheCursorReportTheTrimmedOnes() {
        var cursor = FeedCursor(resumingAfter: 4)
        #expect(cursor.accept(rows: [9, 10], headBefore: 10)
                == [.missed(FeedCursor.Missed(sequences: 5...8)), .deliver(0), .deliver(1)])
        #expect(cursor.last == 10)
    }

    @Test func aHoleInTheMiddleIsReportedNotACrashNorSilence() {
        var cursor = FeedCursor(resumingAfter: 0)
        #expect(cursor.accept(rows: [1, 2, 5, 6], headBefore: 6)
                == [.deliver(0), .deliver(1), .missed(FeedCursor.Missed(sequences: 3...4)), .deliver(2), .deliver(3)])
        #expect(cursor.last == 6)
    }

    @Test func nothingRetainedAfterTheCursorButAHigherHeadReportsEverythingMissed() {
        var cursor = FeedCursor(resumingAfter: 4)
        #expect(cursor.accept(rows: [], headBefore: 12) == [.missed(FeedCursor.Missed(sequences: 5...12))])
        #expect(cursor.last == 12)
        // Caught up: the same head again is no gap.
        #expect(cursor.accept(rows: [], headBefore: 12).isEmpty)
    }

    @Test func aCursorAheadOfTheHeadIsReportedAndKept() {
        var cursor = FeedCursor(resumingAfter: 50)
        #expect(cursor.accept(rows: [], headBefore: 6) == [.cursorAhead(head: 6)])
        #expect(cursor.last == 50)
    }

    @Test func aNewInstanceStartsAtTheHeadWithoutReportingWhatCameBeforeItsTail() {
        var cursor = FeedCursor(resumingAfter: nil)
        cursor.start(head: 20, tail: [18, 19, 20])
        #expect(cursor.last == 20)
        var empty = FeedCursor(resumingAfter: nil)
        empty.start(head: 0, tail: [])
        #expect(empty.last == 0)
    }

    @Test func channelsAreValidIdentifiersStablePerTopic() {
        let channel = PostgresReplaySubject<Int>.channel(for: "orders")
        #expect(channel == PostgresReplaySubject<String>.channel(for: "orders"))
        #expect(channel != PostgresReplaySubject<Int>.channel(for: "orders2"))
        #expect(channel.utf8.count == 23)
        #expect(PostgresReplaySubject<Int>.channel(for: String(repeating: "é", count: 500)).utf8.count == 23)
    }
}
