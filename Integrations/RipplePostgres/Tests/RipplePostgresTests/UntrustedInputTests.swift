import Foundation
import Logging
import PostgresNIO
import Ripple
import Testing

@testable import RipplePostgres

private func subject<Value>(
    _ topic: String, capacity: Int = 100, maxAge: Duration? = nil, onMissedValues: MissedValuesPolicy = .fail,
    logger: Logger = TestDatabase.logger, of: Value.Type
) throws -> PostgresReplaySubject<Value> {
    PostgresReplaySubject<Value>(
        topic: topic, capacity: capacity, maxAge: maxAge, onMissedValues: onMissedValues,
        configuration: try TestDatabase.configuration, logger: logger)
}

/// Sends `payloads` on `topic`'s channel as a role with no grants at all, in one transaction.
private func forge(_ topic: String, _ payloads: [String]) async throws {
    try await TestDatabase.role("ripple_attacker")
    let channel = PostgresReplaySubject<Int>.channel(for: topic)
    try await TestDatabase.sql(
        "SELECT count(pg_notify(\(channel), p))::text FROM unnest(\(payloads)::text[]) AS p", as: "ripple_attacker")
}

/// Notifications and rows are untrusted: any role that can connect can NOTIFY.
extension Database {
    @Suite(.serialized, .enabled(if: TestDatabase.available, "no PostgreSQL: set PGHOST (see .ci/postgres)"))
    struct UntrustedInputTests {
        @Test func aForgedNotificationNeverDeliversAValueNorHidesTheRealOne() async throws {
            let topic = TestDatabase.topic("forged")
            let follower = try await Running(try subject(topic, of: String.self))
            let received = Recorder<String>()
            received.attach(follower.feed)
            let gaps = Recorder<MissedValues>()
            gaps.attach(follower.feed.missedValues)
            try await forge(topic, ["1 1764000000 \"FORGED\"", "+2 1764000000 \"FORGED\"", "2 0x1p30 \"FORGED\"", "1"])
            try await Task.sleep(for: .milliseconds(300))  // the forged ones arrive first
            try await follower.feed.send("one")
            try await follower.feed.send("two")
            #expect(await eventually(60) { received.values.count >= 2 })
            try await follower.feed.send("three")
            #expect(await eventually(60) { received.values.count >= 3 })
            #expect(received.values == ["one", "two", "three"])
            #expect(gaps.values.isEmpty && received.errors.isEmpty)
            // A new instance sees the same values.
            let joiner = try subject(topic, of: String.self)
            let replayed = Recorder<String>()
            replayed.attach(joiner)
            let running = try await Running(joiner)
            #expect(replayed.values == ["one", "two", "three"])
            await running.stop(); await follower.stop()
        }

        @Test func anUndecodableNotificationStopsNoInstanceAndLosesNoValue() async throws {
            let topic = TestDatabase.topic("undecodable")
            let follower = try await Running(try subject(topic, of: Int.self))  // .fail
            let received = Recorder<Int>()
            received.attach(follower.feed)
            try await forge(topic, ["1 0 {\"hello\":1}"])
            try await Task.sleep(for: .milliseconds(300))
            try await follower.feed.send(1)
            try await follower.feed.send(2)
            #expect(await eventually(60) { received.values.count >= 2 })
            #expect(received.values == [1, 2] && received.errors.isEmpty)
            #expect(follower.feed.currentConnectionState.isLive)
            await follower.stop()
            #expect(received.completions == 1 && received.errors.isEmpty)
        }

        @Test func epochsThatAreNotFiniteOrHugeCrashNothingInANotificationOrARow() async throws {
            let topic = TestDatabase.topic("epochs")
            let follower = try await Running(try subject(topic, maxAge: .seconds(60), of: Int.self))
            let received = Recorder<Int>()
            received.attach(follower.feed)
            try await forge(topic, ["1 nan 1", "1 inf 1", "1 1e300 1", "1 -1e300 1"])
            try await Task.sleep(for: .milliseconds(300))
            for i in 1...3 { try await follower.feed.send(i) }
            #expect(await eventually(60) { received.values.count >= 3 })
            #expect(received.values == [1, 2, 3])
            // A row whose time is infinite (written by a role allowed to write the table).
            try await TestDatabase.sql("UPDATE ripple_values SET created_at = 'infinity' WHERE topic = \(topic) AND seq = 2 RETURNING seq::text")
            let joiner = try subject(topic, maxAge: .seconds(60), of: Int.self)
            let replayed = Recorder<Int>()
            replayed.attach(joiner)
            let running = try await Running(joiner)
            #expect(replayed.values == [1, 2, 3])
            let late = Recorder<Int>()
            late.attach(joiner)
            #expect(late.values == [1, 2, 3])
            await running.stop(); await follower.stop()
        }

        @Test func aFutureDatedRowAgesFromWhenItIsReadSoMaxAgeStillDropsIt() async throws {
            let topic = TestDatabase.topic("future")
            let publisher = try subject(topic, maxAge: .seconds(2), of: String.self)
            try await publisher.send("future")
            try await TestDatabase.sql("UPDATE ripple_values SET created_at = '2096-01-01' WHERE topic = \(topic) AND seq = 1 RETURNING seq::text")
            let joiner = try subject(topic, maxAge: .seconds(2), of: String.self)
            let received = Recorder<String>()
            received.attach(joiner)
            let running = try await Running(joiner)
            #expect(received.values == ["future"])
            try await publisher.send("later")
            #expect(await eventually(60) { received.values == ["future", "later"] })
            try await Task.sleep(for: .seconds(3))  // both are older than maxAge now
            let late = Recorder<String>()
            late.attach(joiner)
            #expect(late.values == [])
            await running.stop()
        }

        @Test func aNotificationWithANewlineCannotForgeALogLine() async throws {
            let topic = TestDatabase.topic("logline")
            let logs = CapturedLogs()
            let follower = try await Running(try subject(topic, logger: logs.logger(), of: Int.self))
            try await forge(topic, ["x\n2026-11-27T00:00:00 critical : forged line\u{1b}[31m"])
            try await follower.feed.send(1)
            let received = Recorder<Int>()
            received.attach(follower.feed)
            #expect(await eventually(60) { received.values == [1] })
            try await Task.sleep(for: .milliseconds(300))
            let lines = logs.all.filter { $0.metadata["payload"] != nil }
            #expect(lines.count == 1, "\(logs.all)")
            for record in logs.all {
                for text in [record.message] + Array(record.metadata.values) {
                    #expect(!text.contains("\n") && !text.contains("\u{1b}"), "\(text.debugDescription)")
                }
            }
            await follower.stop()
        }
    }
}
