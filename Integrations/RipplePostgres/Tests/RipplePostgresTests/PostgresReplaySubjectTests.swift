import Foundation
import Logging
import PostgresNIO
import Ripple
import ServiceLifecycle
import Testing

@testable import RipplePostgres

private func subject<Value>(
    _ topic: String, capacity: Int = 100, maxAge: Duration? = nil, resumingAfter: Int64? = nil,
    onMissedValues: MissedValuesPolicy = .fail, heartbeat: Duration = .seconds(5), of: Value.Type = String.self
) throws -> PostgresReplaySubject<Value> {
    PostgresReplaySubject<Value>(
        topic: topic, capacity: capacity, maxAge: maxAge, resumingAfter: resumingAfter,
        onMissedValues: onMissedValues, heartbeat: heartbeat, configuration: try TestDatabase.configuration, logger: TestDatabase.logger)
}

/// Against a real server (`.ci/postgres start`); serialized, because one test restarts it.
extension Database {
    @Suite(.serialized, .enabled(if: TestDatabase.available, "no PostgreSQL: set PGHOST (see .ci/postgres)"))
    struct PostgresReplaySubjectTests {
        @Test func everySubscriberInTwoInstancesAndAnotherProcessGetsEachValueOnceInOneOrder() async throws {
            let topic = TestDatabase.topic("fanout")
            let a = try await Running(try subject(topic))
            let b = try await Running(try subject(topic))
            let recorders = (0..<4).map { _ in Recorder<String>() }
            recorders[0].attach(a.feed); recorders[1].attach(a.feed)
            recorders[2].attach(b.feed); recorders[3].attach(b.feed.map { $0 })
            let follower = try Feed.Child(["follow", "--topic", topic, "--count", "60"])
            try await Task.sleep(for: .milliseconds(500))  // the follower is listening
            async let fromA: Void = { for i in 0..<30 { try await a.feed.send("a\(i)") } }()
            async let fromB: Void = { for i in 0..<30 { try await b.feed.send("b\(i)") } }()
            _ = try await (fromA, fromB)
            #expect(await eventually { recorders.allSatisfy { $0.values.count >= 60 } })
            #expect(await follower.wait() == 0, "\(follower.errorText)")
            let order = recorders[0].values
            #expect(Set(order).count == 60)
            #expect(order.filter { $0.hasPrefix("a") } == (0..<30).map { "a\($0)" })
            #expect(order.filter { $0.hasPrefix("b") } == (0..<30).map { "b\($0)" })
            for recorder in recorders { #expect(recorder.values == order) }
            #expect(follower.lines == order)
            await a.stop(); await b.stop()
            for recorder in recorders { #expect(recorder.values.count == 60 && recorder.completions == 1) }
        }

        @Test func aLateSubscriberAndANewInstanceReplayTheRetainedTailThenGoLive() async throws {
            let topic = TestDatabase.topic("late")
            let a = try await Running(try subject(topic, capacity: 5, of: Int.self))
            // `lastDeliveredSequence` moves before the value reaches the buffer: wait for a subscriber.
            let probe = Recorder<Int>()
            probe.attach(a.feed)
            for i in 1...8 { try await a.feed.send(i) }
            let early = Recorder<Int>()
            #expect(await eventually { probe.values.last == 8 })
            early.attach(a.feed)
            #expect(early.values == [4, 5, 6, 7, 8])
            let b = try subject(topic, capacity: 5, of: Int.self)
            let joiner = Recorder<Int>()
            joiner.attach(b)
            let runningB = try await Running(b)
            #expect(joiner.values == [4, 5, 6, 7, 8])
            try await a.feed.send(9)
            try await b.send(10)
            #expect(await eventually { joiner.values.count == 7 && early.values.count == 7 })
            #expect(joiner.values == [4, 5, 6, 7, 8, 9, 10])
            #expect(early.values == [4, 5, 6, 7, 8, 9, 10])
            let late = Recorder<Int>()
            late.attach(b)
            #expect(late.values == [6, 7, 8, 9, 10])
            // The table is trimmed to `capacity` by the publisher of every 16th value.
            for i in 11...16 { try await a.feed.send(i) }
            #expect(try await TestDatabase.sql("SELECT string_agg(seq::text, ',' ORDER BY seq) FROM ripple_values WHERE topic = \(topic)") == ["12,13,14,15,16"])
            await a.stop(); await runningB.stop()
        }

        @Test func valuesOlderThanMaxAgeOnTheDatabasesClockAreNotReplayed() async throws {
            let topic = TestDatabase.topic("age")
            let a = try await Running(try subject(topic, maxAge: .seconds(1.5)))
            let probe = Recorder<String>()
            probe.attach(a.feed)
            try await a.feed.send("old")
            try await Task.sleep(for: .seconds(2))
            try await a.feed.send("new")
            #expect(await eventually { probe.values.last == "new" })
            let late = Recorder<String>()
            late.attach(a.feed)
            #expect(late.values == ["new"])
            let b = try subject(topic, maxAge: .seconds(1.5))
            let joiner = Recorder<String>()
            joiner.attach(b)
            let runningB = try await Running(b)
            #expect(joiner.values == ["new"])
            await a.stop(); await runningB.stop()
        }

        @Test func concurrentPublishersInTwoProcessesGiveEverySubscriberOneOrder() async throws {
            let topic = TestDatabase.topic("publishers")
            let a = try await Running(try subject(topic))
            let mine = Recorder<String>()
            mine.attach(a.feed)
            let follower = try Feed.Child(["follow", "--topic", topic, "--count", "120"])
            try await Task.sleep(for: .milliseconds(500))
            let p = try Feed.Child(["publish", "--topic", topic] + (0..<40).map { "p\($0)" })
            let q = try Feed.Child(["publish", "--topic", topic] + (0..<40).map { "q\($0)" })
            for i in 0..<40 { try await a.feed.send("r\(i)") }
            #expect(await p.wait() == 0, "\(p.errorText)")
            #expect(await q.wait() == 0, "\(q.errorText)")
            #expect(await follower.wait() == 0, "\(follower.errorText)")
            #expect(await eventually { mine.values.count == 120 })
            let order = mine.values
            #expect(follower.lines == order)
            for prefix in ["p", "q", "r"] {
                #expect(order.filter { $0.hasPrefix(prefix) } == (0..<40).map { "\(prefix)\($0)" })
            }
            await a.stop()
        }

        @Test func aListenerConnectionKilledMidStreamLosesAndDoublesNothing() async throws {
            let topic = TestDatabase.topic("killed")
            let follower = try await Running(try subject(topic, of: Int.self))
            let received = Recorder<Int>()
            received.attach(follower.feed)
            let states = Recorder<ConnectionState>()
            states.attach(follower.feed.connectionState)
            let publisher = try subject(topic, of: Int.self)
            let sending = Task {
                for i in 0..<300 {
                    try await publisher.send(i)
                    if i % 10 == 0 { try await Task.sleep(for: .milliseconds(2)) }
                }
            }
            for after in [60, 180] {
                #expect(await eventually { received.values.count >= after },
                        "received \(received.values.count); states: \(states.values.map(\.description))")
                #expect(try await TestDatabase.terminateListeners(of: topic) == 1)
            }
            try await sending.value
            #expect(await eventually { received.values.count >= 300 })
            #expect(received.values == Array(0..<300))
            #expect(states.values.filter { if case .disconnected = $0 { true } else { false } }.count == 2)
            #expect(states.values.filter(\.isLive).count == 3)
            await follower.stop()
        }

        @Test(.enabled(if: TestDatabase.canRestart, "set RIPPLE_PG_RESTART (see .ci/postgres)"))
        func aServerRestartMidStreamLosesAndDoublesNothing() async throws {
            let topic = TestDatabase.topic("restart")
            let follower = try await Running(try subject(topic, of: Int.self))
            let received = Recorder<Int>()
            received.attach(follower.feed)
            let states = Recorder<ConnectionState>()
            states.attach(follower.feed.connectionState)
            let publisher = try subject(topic, of: Int.self)
            for i in 0..<20 { try await publisher.send(i) }
            #expect(await eventually { received.values.count == 20 })
            try TestDatabase.restartServer()
            for i in 20..<40 {
                // The publisher's old connection is dead: the statement never reached the server,
                // so sending again cannot double it.
                var attempts = 0
                while true {
                    do {
                        try await publisher.send(i)
                        break
                    } catch let error as PSQLError where attempts < 50
                        && (error.serverInfo == nil || error.serverInfo?[.sqlState]?.hasPrefix("57P") == true) {
                        attempts += 1
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
            }
            #expect(await eventually(30) { received.values.count >= 40 })
            #expect(received.values == Array(0..<40))
            #expect(states.values.contains { if case .disconnected = $0 { true } else { false } })
            await follower.stop()
        }

        @Test func valuesOverNotifysLimitArriveWhole() async throws {
            struct Document: Codable, Equatable, Sendable {
                var title: String
                var lines: [String]
            }
            let topic = TestDatabase.topic("large")
            let follower = try await Running(try subject(topic, of: Document.self))
            let received = Recorder<Document>()
            received.attach(follower.feed)
            let documents = [
                Document(title: "small", lines: ["a"]),
                Document(title: "just over", lines: [String(repeating: "x", count: 8_000)]),
                Document(title: "small again", lines: ["b"]),
                Document(title: "large", lines: (0..<2_000).map { "line \($0) " + String(repeating: "é", count: 20) }),
                Document(title: "last", lines: []),
            ]
            for document in documents { try await follower.feed.send(document) }
            #expect(await eventually { received.values.count == documents.count })
            #expect(received.values == documents)
            let joiner = Recorder<Document>()
            let b = try subject(topic, of: Document.self)
            joiner.attach(b)
            let runningB = try await Running(b)
            #expect(joiner.values == documents)
            await follower.stop(); await runningB.stop()
        }

        @Test func anInstanceRestartingWithItsCursorGetsExactlyWhatCameAfter() async throws {
            let topic = TestDatabase.topic("cursor")
            let first = try await Running(try subject(topic, of: Int.self))
            for i in 1...3 { try await first.feed.send(i) }
            #expect(await eventually { first.feed.lastDeliveredSequence == 3 })
            await first.stop()
            let cursor = try #require(first.feed.lastDeliveredSequence)
            let publisher = try subject(topic, of: Int.self)
            for i in 4...7 { try await publisher.send(i) }
            let again = try subject(topic, resumingAfter: cursor, of: Int.self)
            let received = Recorder<Int>()
            received.attach(again)
            let running = try await Running(again)
            #expect(received.values == [4, 5, 6, 7])
            try await publisher.send(8)
            #expect(await eventually { received.values == [4, 5, 6, 7, 8] })
            await running.stop()
        }

        /// A catch-up reads pages of at most about 1 MB (so the heartbeat's probe never waits
        /// behind one long read): large values arrive over several pages, all of them, in order.
        @Test func largeValuesCaughtUpOverSeveralPagesArriveInOrderWithNoGap() async throws {
            let topic = TestDatabase.topic("large-pages")
            let publisher = try subject(topic, of: String.self)
            let values = (0..<7).map { String(repeating: Character(String($0)), count: 400_000) }
            for value in values { try await publisher.send(value) }
            let follower = try subject(topic, resumingAfter: 0, of: String.self)
            let received = Recorder<String>()
            received.attach(follower)
            let running = try await Running(follower)
            #expect(await eventually(60) { received.values.count == 7 })
            #expect(received.values == values, "7 values of 400 KB: three pages, nothing lost or doubled")
            #expect(received.errors.isEmpty)
            await running.stop()
        }

        @Test func anInstanceAwayLongerThanRetentionIsToldWhatItMissed() async throws {
            let topic = TestDatabase.topic("trimmed")
            let publisher = try subject(topic, capacity: 5, of: Int.self)
            for i in 1...3 { try await publisher.send(i) }
            for i in 4...16 { try await publisher.send(i) }  // the 16th trims to the last 5: retained 12...16

            let strict = try subject(topic, capacity: 5, resumingAfter: 3, of: Int.self)
            let failed = Recorder<Int>()
            failed.attach(strict)
            let result = await Task { try await strict.run() }.result
            let expected = MissedValues(topic: topic, sequences: 4...11, reason: .trimmed)
            #expect(throws: PostgresReplayError.self) { try result.get() }
            #expect(failed.values.isEmpty && failed.completions == 0)
            #expect(failed.errors.count == 1)
            if case .missedValues(let missed)? = failed.errors.first as? PostgresReplayError { #expect(missed == expected) }
            else { Issue.record("expected missedValues, got \(failed.errors)") }
            if case .stopped = strict.currentConnectionState {} else { Issue.record("\(strict.currentConnectionState)") }

            let lenient = try subject(topic, capacity: 5, resumingAfter: 3, onMissedValues: .skip, of: Int.self)
            let gaps = Recorder<MissedValues>()
            gaps.attach(lenient.missedValues)
            let received = Recorder<Int>()
            received.attach(lenient)
            let running = try await Running(lenient)
            #expect(gaps.values == [expected])
            #expect(received.values == [12, 13, 14, 15, 16])
            try await publisher.send(17)
            #expect(await eventually { received.values.last == 17 })
            await running.stop()
            #expect(received.values == [12, 13, 14, 15, 16, 17] && received.completions == 1)
        }

        @Test func aCursorAheadOfTheTopicEndsTheSubjectWithAnErrorWhateverThePolicy() async throws {
            let topic = TestDatabase.topic("ahead")
            let publisher = try subject(topic, of: Int.self)
            for i in 1...3 { try await publisher.send(i) }
            for policy in [MissedValuesPolicy.skip, .fail] {
                let stale = try subject(topic, resumingAfter: 50, onMissedValues: policy, of: Int.self)
                let received = Recorder<Int>()
                received.attach(stale)
                let result = await Task { try await stale.run() }.result
                #expect(throws: PostgresReplayError.self) { try result.get() }
                #expect(received.values.isEmpty && received.errors.count == 1)
                guard case .cursorAhead(_, 50, 3)? = received.errors.first as? PostgresReplayError else {
                    Issue.record("expected cursorAhead, got \(received.errors)")
                    continue
                }
            }
        }

        @Test func aTopicResetWhileLiveEndsTheSubjectWithCursorAheadWithinAHeartbeat() async throws {
            // The topic's rows are deleted (a reset, a restore) while an instance is live: the
            // next value gets sequence 1 again, whose hint is at or below the cursor. Without a
            // check the instance would drop every new value in silence.
            let topic = TestDatabase.topic("reset")
            let feed = try subject(topic, heartbeat: .milliseconds(200), of: Int.self)
            let received = Recorder<Int>()
            received.attach(feed)
            let running = try await Running(feed)
            for i in 1...3 { try await feed.send(i) }
            #expect(await eventually(60) { received.values == [1, 2, 3] })
            try await TestDatabase.sql("DELETE FROM ripple_values WHERE topic = \(topic) RETURNING seq::text")
            try await TestDatabase.sql("DELETE FROM ripple_topics WHERE topic = \(topic) RETURNING head::text")
            try await feed.send(10)
            #expect(await eventually(60) { !received.errors.isEmpty })
            // The head the check saw: 1, or 0 if it ran between the deletes and the new value.
            guard case .cursorAhead(_, 3, let head)? = received.errors.first as? PostgresReplayError, head < 3 else {
                Issue.record("expected cursorAhead after 3 at a head below it, got \(received.errors)")
                await running.stop()
                return
            }
            #expect(received.values == [1, 2, 3])
            await running.stop()
        }

        @Test func aServerClockSteppingBackKeepsAgesInSequenceOrder() async throws {
            // created_at is taken under the topic's lock and never goes behind the previous value's:
            // emulate a server clock that ran 10 s ahead for value 3, then stepped back.
            let topic = TestDatabase.topic("clock")
            let publisher = try subject(topic, maxAge: .seconds(5), of: Int.self)
            for i in 1...3 { try await publisher.send(i) }
            try await TestDatabase.sql("UPDATE ripple_topics SET last_at = last_at + interval '10 seconds' WHERE topic = \(topic) RETURNING head::text")
            try await TestDatabase.sql("UPDATE ripple_values SET created_at = created_at + interval '10 seconds' WHERE topic = \(topic) AND seq = 3 RETURNING seq::text")
            for i in 4...6 { try await publisher.send(i) }
            let order = try await TestDatabase.sql("""
                SELECT count(*)::text FROM (SELECT created_at < lag(created_at) OVER (ORDER BY seq) AS back
                FROM ripple_values WHERE topic = \(topic)) AS x WHERE back
                """)
            #expect(order == ["0"])
            // A new instance with maxAge replays a suffix, without a hole and without a crash.
            let joiner = try subject(topic, maxAge: .seconds(5), of: Int.self)
            let received = Recorder<Int>()
            received.attach(joiner)
            let running = try await Running(joiner)
            #expect(received.values == [1, 2, 3, 4, 5, 6])
            await running.stop()
        }

        @Test(.enabled(if: getuid() == 0, "needs to stop a server process (root)"))
        func aListenerWhoseConnectionStopsAnsweringReconnectsAndCatchesUp() async throws {
            // SIGSTOP on the listener's backend: the TCP connection stays open and says nothing, as a
            // half-open connection does. The heartbeat notices, closes it and catches up.
            let topic = TestDatabase.topic("silent")
            let follower = try await Running(try subject(topic, heartbeat: .milliseconds(300), of: Int.self))
            let received = Recorder<Int>()
            received.attach(follower.feed)
            let name = String("ripple listener \(topic)".prefix(63))
            let pids = try await TestDatabase.sql("SELECT pid::text FROM pg_stat_activity WHERE application_name = \(name)")
            let pid = try #require(pids.first.flatMap { $0 }.flatMap { pid_t($0) })
            #expect(kill(pid, SIGSTOP) == 0)
            defer { kill(pid, SIGCONT) }
            let publisher = try subject(topic, of: Int.self)
            for i in 0..<20 { try await publisher.send(i) }
            #expect(await eventually(10) { received.values.count == 20 })
            #expect(received.values == Array(0..<20))
            kill(pid, SIGCONT)
            try await publisher.send(20)
            #expect(await eventually { received.values.count == 21 })
            await follower.stop()
        }

        @Test func afterRunReturnsSendThrowsAndTheStateSignalsComplete() async throws {
            let topic = TestDatabase.topic("stopped")
            let feed = try subject(topic)
            let states = Recorder<ConnectionState>()
            states.attach(feed.connectionState)
            let gaps = Recorder<MissedValues>()
            gaps.attach(feed.missedValues)
            let running = try await Running(feed)
            try await feed.send("before")
            await running.stop()
            #expect(states.completions == 1 && gaps.completions == 1)
            await #expect(throws: PostgresReplayError.self) { try await feed.send("after") }
        }

        @Test func gracefulShutdownCompletesEverySubscriptionOnce() async throws {
            let topic = TestDatabase.topic("shutdown")
            let feed = try subject(topic)
            let received = Recorder<String>()
            received.attach(feed)
            let states = Recorder<ConnectionState>()
            states.attach(feed.connectionState)
            let group = ServiceGroup(services: [feed], gracefulShutdownSignals: [], logger: TestDatabase.logger)
            let running = Task { try await group.run() }
            #expect(await eventually { feed.currentConnectionState.isLive })
            try await feed.send("one")
            #expect(await eventually { received.values == ["one"] })
            await group.triggerGracefulShutdown()
            try await running.value
            #expect(received.completions == 1 && received.errors.isEmpty)
            #expect(states.values.map(\.description) == ["idle", "connecting", "catching up", "live", "stopped"])
            await #expect(throws: PostgresReplayError.self) { try await feed.run() }
        }

        @Test func anUnreachableServerIsReportedAndRetriedUntilCancelled() async throws {
            var configuration = try TestDatabase.configuration
            configuration = .init(host: "127.0.0.1", port: 1, username: configuration.username, password: nil, database: nil, tls: .disable)
            let feed = PostgresReplaySubject<Int>(topic: "unreachable", capacity: 1, configuration: configuration, logger: TestDatabase.logger)
            let states = Recorder<ConnectionState>()
            states.attach(feed.connectionState)
            let running = Task { try await feed.run() }
            #expect(await eventually { states.values.filter { if case .disconnected = $0 { true } else { false } }.count >= 2 })
            running.cancel()
            try await running.value
            if case .stopped = feed.currentConnectionState {} else { Issue.record("\(feed.currentConnectionState)") }
            await #expect(throws: (any Error).self) { try await feed.send(1) }
        }
    }
}
