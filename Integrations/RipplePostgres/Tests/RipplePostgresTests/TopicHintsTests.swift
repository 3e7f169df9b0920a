import Foundation
import Testing

@testable import RipplePostgres

/// Notifications as hints, and untrusted text made safe, without a database.
@Suite struct TopicHintsTests {
    @Test func onlyOneToNineteenPlainDigitsFittingInt64AreASequence() {
        #expect(TopicHints.sequence(in: "0") == 0)
        #expect(TopicHints.sequence(in: "42") == 42)
        #expect(TopicHints.sequence(in: "007") == 7)
        #expect(TopicHints.sequence(in: "9223372036854775807") == Int64.max)
        for payload in ["", "+3", "-3", " 3", "3 ", "3 1700000000.5", "0x10", "3\n", "9223372036854775808",
                        "99999999999999999999", "1e3", "３", String(repeating: "1", count: 8_000)] {
            #expect(TopicHints.sequence(in: payload) == nil, "\(payload.debugDescription)")
        }
    }

    @Test func aHintAtOrBelowTheCursorCostsNothingAndAnythingElseQueuesOneRead() {
        var hints = TopicHints()
        #expect(hints.want() == .queue)  // the first read after LISTEN
        hints.take()
        hints.read(upTo: 10)
        #expect(hints.hint("10") == (.stale, false))
        #expect(hints.hint("3") == (.stale, false))
        #expect(hints.hint("11") == (.queue, false))
        #expect(hints.hint("12") == (.coalesced, false))
        #expect(hints.hint("forged") == (.coalesced, true))
        hints.take()  // the reader reads now: hints meanwhile queue exactly one more read
        #expect(hints.hint("+11") == (.queue, true))
        for _ in 0..<10_000 { #expect(hints.hint("13 \"FORGED\"").outcome == .coalesced) }
        hints.take()
        hints.read(upTo: 12)
        #expect(hints.hint("12") == (.stale, false))
        #expect(!hints.queued)
    }

    @Test func aReconnectForgetsTheQueuedReadAndWaitsForTheCatchUp() {
        var hints = TopicHints()
        _ = hints.want()
        hints.take()
        hints.read(upTo: 5)
        _ = hints.hint("6")
        hints.reconnected()
        #expect(!hints.caughtUp && !hints.queued && hints.cursor == 5)
        #expect(hints.hint("4") == (.stale, false))
        #expect(hints.hint("6") == (.queue, false))
    }

    @Test func untrustedTextIsEscapedToOneBoundedPrintableLine() {
        #expect(Untrusted.escaped("3 1 \"x\"\n2026-01-01 error: forged") == "3 1 \"x\"\\n2026-01-01 error: forged")
        #expect(Untrusted.escaped("a\0b\\c\u{7}é") == "a\\0b\\\\c\\u{7}\\u{e9}")
        #expect(Untrusted.escaped(String(repeating: "x", count: 8_000), limit: 10) == "xxxxxxxxxx…")
    }

    @Test func anApplicationNameIsPrintableAsciiOfAtMost63Bytes() {
        #expect(Untrusted.applicationName("ripple listener a\0search_path\0evil") == "ripple listener a?search_path?evil")
        #expect(Untrusted.applicationName("ripple listener été\n") == "ripple listener ??t???")
        #expect(Untrusted.applicationName(String(repeating: "t", count: 100)).utf8.count == 63)
    }

    @Test func aTopicIsNonEmptyWithoutNulAndAtMost256Bytes() throws {
        try PostgresReplaySubject<Int>.validate(topic: "orders")
        try PostgresReplaySubject<Int>.validate(topic: "commandes été / 東京 \n")
        try PostgresReplaySubject<Int>.validate(topic: String(repeating: "é", count: 128))
        #expect(throws: InvalidTopic.empty) { try PostgresReplaySubject<Int>.validate(topic: "") }
        #expect(throws: InvalidTopic.containsNul) { try PostgresReplaySubject<Int>.validate(topic: "a\0search_path\0evil") }
        #expect(throws: InvalidTopic.tooLong(bytes: 257)) {
            try PostgresReplaySubject<Int>.validate(topic: String(repeating: "t", count: 257))
        }
        #expect("\(InvalidTopic.tooLong(bytes: 3_000))" == "a topic is at most 256 bytes of UTF-8, this one has 3000")
    }

    @Test func theDatabaseClockClampsNonFiniteHugeAndFutureEpochsToNow() {
        let clock = DatabaseClock()
        clock.synchronize(databaseEpoch: 1_000_000)
        for epoch in [Double.nan, .infinity, -.infinity, 1e300, -1e300, 4_000_000_000] {
            let now = DatabaseClock.stamping(clock.clamped(epoch)) { clock.now }
            #expect(now >= .seconds(0) && now <= .seconds(1_000_100), "\(epoch)")
        }
        #expect(DatabaseClock.stamping(clock.clamped(999_000)) { clock.now } == .seconds(999_000))
        clock.synchronize(databaseEpoch: .nan)  // ignored
        #expect(clock.now >= .seconds(1_000_000) && clock.now <= .seconds(1_000_100))
    }
}
