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

    /// `stale`, `queue` or `coalesced`, and `!` when the payload was rejected.
    private func hint(_ hints: inout TopicHints, _ payload: String) -> String {
        let (outcome, rejected) = hints.hint(payload)
        return "\(outcome)" + (rejected ? "!" : "")
    }

    @Test func aHintAtOrBelowTheCursorCostsNothingAndAnythingElseQueuesOneRead() {
        var hints = TopicHints()
        #expect(hints.want() == .queue)  // the first read after LISTEN
        hints.take()
        hints.read(upTo: 10)
        #expect(hint(&hints, "10") == "stale")
        #expect(hint(&hints, "3") == "stale")
        #expect(hint(&hints, "11") == "queue")
        #expect(hint(&hints, "12") == "coalesced")
        #expect(hint(&hints, "forged") == "coalesced!")
        hints.take()  // the reader reads now: hints meanwhile queue exactly one more read
        #expect(hint(&hints, "+11") == "queue!")
        for _ in 0..<10_000 { #expect(hint(&hints, "13 \"FORGED\"") == "coalesced!") }
        hints.take()
        hints.read(upTo: 12)
        #expect(hint(&hints, "12") == "stale")
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
        #expect(hint(&hints, "4") == "stale")
        #expect(hint(&hints, "6") == "queue")
    }

    @Test func untrustedTextIsEscapedToOneBoundedPrintableLine() {
        #expect(Untrusted.escaped("3 1 \"x\"\n2026-01-01 error: forged") == "3 1 \"x\"\\n2026-01-01 error: forged")
        #expect(Untrusted.escaped("a\0b\\c\u{7}é") == "a\\0b\\\\c\\u{7}\\u{e9}")
        #expect(Untrusted.escaped(String(repeating: "x", count: 8_000), limit: 10) == "xxxxxxxxxx…")
    }

    @Test func anApplicationNameIsPrintableAsciiOfAtMost63Bytes() {
        #expect(Untrusted.applicationName("ripple listener a\0search_path\0evil") == "ripple listener a?search_path?evil")
        #expect(Untrusted.applicationName("ripple listener été\n") == "ripple listener ?t??")
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
