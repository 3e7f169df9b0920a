import Dispatch
import Foundation
import Logging
import PostgresNIO
import Ripple
import ServiceLifecycle
import Testing

@testable import RipplePostgres

/// Many subjects on one listener connection.
extension Database {
    @Suite(.serialized, .enabled(if: TestDatabase.available, "no PostgreSQL: set PGHOST (see .ci/postgres)"))
    struct PostgresTopicsTests {
        private func connections(_ name: String) async throws -> Int {
            let count = try await TestDatabase.sql("SELECT count(*)::text FROM pg_stat_activity WHERE application_name = \(name)")
            return Int(count.first.flatMap { $0 } ?? "") ?? -1
        }

        @Test func aThousandSubjectsUseOneListeningConnectionAndEachValueArrivesOnceInOrder() async throws {
            let name = TestDatabase.topic("thousand")
            let topics = PostgresTopics(name: name, configuration: try TestDatabase.configuration, logger: TestDatabase.logger)
            let prefix = TestDatabase.topic("many")
            let subjects = (0..<1_000).map { PostgresReplaySubject<Int>(topic: "\(prefix)-\($0)", capacity: 10, on: topics) }
            let running = Task { try await topics.run() }
            #expect(await eventually(120) { subjects.allSatisfy(\.currentConnectionState.isLive) })
            #expect(try await connections("ripple listener \(name)") == 1)
            let chosen = [0, 1, 500, 999]
            let recorders = chosen.map { index in
                let recorder = Recorder<Int>()
                recorder.attach(subjects[index])
                return recorder
            }
            for round in 0..<10 {
                for index in chosen { try await subjects[index].send(round * 1_000 + index) }
            }
            for (recorder, index) in zip(recorders, chosen) {
                #expect(await eventually(60) { recorder.values.count >= 10 })
                #expect(recorder.values == (0..<10).map { $0 * 1_000 + index })
            }
            #expect(try await connections("ripple listener \(name)") == 1)
            let publishing = try await connections("ripple publisher \(name)")
            #expect((1...2).contains(publishing), "the publisher's pool: at most 2 connections, whatever the number of topics")
            // A subject made while the topics run is caught up and goes live on the same connection.
            let late = PostgresReplaySubject<Int>(topic: "\(prefix)-500", capacity: 10, on: topics)
            let replayed = Recorder<Int>()
            replayed.attach(late)
            #expect(await eventually(60) { late.currentConnectionState.isLive })
            #expect(replayed.values == (0..<10).map { $0 * 1_000 + 500 })
            try await subjects[500].send(42)
            #expect(await eventually(60) { replayed.values.last == 42 && recorders[2].values.last == 42 })
            #expect(recorders[2].values.filter { $0 == 42 }.count == 1)
            running.cancel()
            try await running.value
            for recorder in recorders + [replayed] { #expect(recorder.completions == 1 && recorder.errors.isEmpty) }
            #expect(subjects.allSatisfy { if case .stopped = $0.currentConnectionState { true } else { false } })
        }

        @Test func gracefulShutdownOfTheTopicsCompletesEverySubjectOnceAndEndsTheirRun() async throws {
            let topics = PostgresTopics(name: TestDatabase.topic("shutdown"), configuration: try TestDatabase.configuration, logger: TestDatabase.logger)
            let subjects = (0..<3).map { PostgresReplaySubject<String>(topic: TestDatabase.topic("shut\($0)"), capacity: 5, on: topics) }
            let recorders = subjects.map { subject in
                let recorder = Recorder<String>()
                recorder.attach(subject)
                return recorder
            }
            let states = Recorder<ConnectionState>()
            states.attach(subjects[0].connectionState)
            let waiting = subjects.map { subject in Task { try await subject.run() } }
            let group = ServiceGroup(services: [topics], gracefulShutdownSignals: [], logger: TestDatabase.logger)
            let running = Task { try await group.run() }
            #expect(await eventually(60) { subjects.allSatisfy(\.currentConnectionState.isLive) })
            for subject in subjects { try await subject.send("one") }
            #expect(await eventually(60) { recorders.allSatisfy { $0.values == ["one"] } })
            await group.triggerGracefulShutdown()
            try await running.value
            for task in waiting { try await task.value }
            for recorder in recorders { #expect(recorder.completions == 1 && recorder.errors.isEmpty) }
            #expect(states.values.map(\.description) == ["idle", "connecting", "catching up", "live", "stopped"])
            await #expect(throws: PostgresReplayError.self) { try await subjects[0].send("after") }
            await #expect(throws: PostgresReplayError.self) { try await topics.run() }
        }

        /// A subject released and made again on the same topic, over and over while the topics
        /// run: each new one is LISTENed (not left marked live with its channel UNLISTENed) and
        /// gets a value sent after it went live.
        @Test func aSubjectMadeAgainJustAfterItsChannelWasLetGoStillHearsNewValues() async throws {
            let topics = PostgresTopics(name: TestDatabase.topic("relisten"), configuration: try TestDatabase.configuration, logger: TestDatabase.logger)
            let topic = TestDatabase.topic("relisten-topic")
            let running = Task { try await topics.run() }
            let sender = PostgresReplaySubject<Int>(topic: topic, capacity: 1, configuration: try TestDatabase.configuration, logger: TestDatabase.logger)
            for round in 0..<15 {
                let recorder = Recorder<Int>()
                do {
                    let subject = PostgresReplaySubject<Int>(topic: topic, capacity: 1, on: topics)
                    recorder.attach(subject)
                    #expect(await eventually(60) { subject.currentConnectionState.isLive })
                    try await sender.send(round)
                    #expect(await eventually(60) { recorder.values.last == round }, "round \(round): a value sent once live arrives")
                    _ = subject  // released here: its channel is UNLISTENed while the next one is made
                }
            }
            running.cancel()
            _ = try? await running.value
            await sender.publisher.close()
        }

        @Test func withTablesThatMustExistAMissingTableEndsRunAndNoDdlRuns() async throws {
            let database = "ripple_empty_\(UUID().uuidString.prefix(8).lowercased())"
            try await TestDatabase.sql(PostgresQuery(unsafeSQL: "CREATE DATABASE \(database)"))
            let configuration = try TestDatabase.configuration(as: TestDatabase.environment["PGUSER"] ?? "postgres", database: database)
            let topics = PostgresTopics(name: database, configuration: configuration, logger: TestDatabase.logger, schema: .mustExist)
            let feed = PostgresReplaySubject<Int>(topic: "t", capacity: 1, on: topics)
            let received = Recorder<Int>()
            received.attach(feed)
            let result = await Task { try await topics.run() }.result
            #expect(throws: PostgresReplayError.self) { try result.get() }
            if case .failure(let error) = result { #expect("\(error)".contains("ripple-feed migrate"), "\(error)") }
            #expect(received.errors.count == 1)
            let tables = try await TestDatabase.sql("SELECT (to_regclass('ripple_values') IS NULL)::text", database: database)
            #expect(tables == ["true"])
            try await PostgresTopics.migrate(configuration: configuration, logger: TestDatabase.logger)
            try await PostgresTopics.migrate(configuration: configuration, logger: TestDatabase.logger)
            #expect(try await TestDatabase.sql("SELECT (to_regclass('ripple_values') IS NOT NULL)::text", database: database) == ["true"])
            try await TestDatabase.sql(PostgresQuery(unsafeSQL: "DROP DATABASE \(database) WITH (FORCE)"))
        }

        @Test func aNulInANameInjectsNoStartupParameter() async throws {
            let base = TestDatabase.topic("nul")
            let topics = PostgresTopics(name: "\(base)\0search_path\0evil", configuration: try TestDatabase.configuration, logger: TestDatabase.logger)
            let feed = PostgresReplaySubject<Int>(topic: base, capacity: 1, on: topics)
            let running = Task { try await topics.run() }
            #expect(await eventually(60) { feed.currentConnectionState.isLive }, "\(feed.currentConnectionState)")
            #expect(try await connections("ripple listener \(base)?search_path?evil") == 1)
            running.cancel()
            try await running.value
        }

        @Test func aFloodOfForgedNotificationsWhileASubscriberIsSlowCostsABoundedNumberOfReads() async throws {
            let logs = CapturedLogs()
            let topics = PostgresTopics(name: TestDatabase.topic("flood"), configuration: try TestDatabase.configuration, logger: logs.logger())
            let topic = TestDatabase.topic("flooded")
            let feed = PostgresReplaySubject<Int>(topic: topic, capacity: 10, on: topics)
            let running = Task { try await topics.run() }
            #expect(await eventually(60) { feed.currentConnectionState.isLive })
            let gate = DispatchSemaphore(value: 0)
            let received = Recorder<Int>()
            received.attach(feed)
            _ = feed.subscribeNext { value in if value == 1 { gate.wait() } }  // a slow subscriber
            try await feed.send(1)
            #expect(await eventually(60) { received.values == [1] })
            let before = topics.statistics
            try await TestDatabase.role("ripple_attacker")
            try await TestDatabase.sql("""
                SELECT count(pg_notify(\(PostgresReplaySubject<Int>.channel(for: topic)),
                    (1000000 + i)::text || ' 0 ' || repeat('x', 7900)))::text
                FROM generate_series(1, 2000) AS i
                """, as: "ripple_attacker")
            // Drained while the subscriber holds the reader up.
            #expect(await eventually(60) { topics.statistics.notifications - before.notifications >= 2_000 })
            gate.signal()
            try await feed.send(2)
            #expect(await eventually(60) { received.values == [1, 2] })
            let after = topics.statistics
            print("a flood of 2,000 forged notifications: \(before) → \(after)")
            #expect(after.rejected - before.rejected >= 2_000)
            #expect(after.reads - before.reads <= 6, "\(before) → \(after)")
            #expect(logs.all.filter { $0.metadata["payload"] != nil }.count <= 1)
            running.cancel()
            try await running.value
        }

        /// The cost of hints: reads of the table per value delivered, at a steady rate and in a
        /// burst. Publishes as the publishing contract says (the payload is the sequence alone).
        /// `RIPPLE_MEASURE=1 swift test --filter readsPerValue` prints the figures.
        @Test(.enabled(if: TestDatabase.environment["RIPPLE_MEASURE"] != nil, "set RIPPLE_MEASURE=1 to measure"))
        func readsPerValue() async throws {
            for (rate, count) in [(100, 300), (1_000, 2_000), (0, 5_000)] {
                let topics = PostgresTopics(name: TestDatabase.topic("measure"), configuration: try TestDatabase.configuration, logger: TestDatabase.logger)
                let topic = TestDatabase.topic("measured")
                let feed = PostgresReplaySubject<Int>(topic: topic, capacity: 100, on: topics)
                let received = Recorder<Int>()
                received.attach(feed)
                let running = Task { try await topics.run() }
                #expect(await eventually(60) { feed.currentConnectionState.isLive })
                let before = topics.statistics
                let connection = try await PostgresConnection.connect(
                    on: PostgresConnection.defaultEventLoopGroup.any(), configuration: try TestDatabase.configuration, id: 98, logger: TestDatabase.logger)
                let channel = PostgresReplaySubject<Int>.channel(for: topic)
                let start = ContinuousClock.now
                for i in 0..<count {
                    _ = try await connection.query("""
                        WITH next AS (
                            INSERT INTO ripple_topics AS t (topic, head, last_at) VALUES (\(topic), 1, clock_timestamp())
                            ON CONFLICT (topic) DO UPDATE SET head = t.head + 1, last_at = greatest(clock_timestamp(), t.last_at)
                            RETURNING head, last_at)
                        INSERT INTO ripple_values (topic, seq, created_at, payload)
                        SELECT \(topic), head, last_at, \(String(i)) FROM next
                        RETURNING pg_notify(\(channel), seq::text)::text
                        """, logger: TestDatabase.logger).collect()
                    if rate > 0 {
                        let due = start + .seconds(Double(i + 1) / Double(rate))
                        if due > .now { try await Task.sleep(until: due) }
                    }
                }
                #expect(await eventually(60) { received.values.count == count })
                let after = topics.statistics
                let reads = after.reads - before.reads
                print("reads per value at \(rate == 0 ? "full speed" : "\(rate) values/s"), \(count) values: "
                      + "\(reads) reads = \(Double(reads) / Double(count)) per value; \(after.stale - before.stale) stale hints")
                try await connection.close()
                running.cancel()
                try await running.value
            }
        }
    }
}
