import Foundation
import Logging
import PostgresNIO
import struct NIOConcurrencyHelpers.NIOLockedValueBox
import Ripple
import Testing

@testable import RipplePostgres

private func feed<Value>(_ topic: String, capacity: Int = 1_000, of: Value.Type = String.self) throws -> PostgresReplaySubject<Value> {
    PostgresReplaySubject<Value>(topic: topic, capacity: capacity, configuration: try TestDatabase.configuration, logger: TestDatabase.logger)
}

/// The topic's retained rows as `SEQ=JSON`, in sequence order.
private func rows(of topic: String) async throws -> [String] {
    try await TestDatabase.sql(
        "SELECT seq::text || '=' || payload FROM ripple_values WHERE topic = \(topic) ORDER BY seq"
    ).map { $0 ?? "" }
}

/// The notifications sent on `channel` while `body` runs and until `until` holds (60 s at most).
private func notifications(
    on channel: String, during body: () async throws -> Void, until: @escaping @Sendable ([String]) -> Bool
) async throws -> [String] {
    let received = NIOLockedValueBox<[String]>([])
    let listening = NIOLockedValueBox<Bool>(false)
    let connection = try await PostgresConnection.connect(
        on: PostgresConnection.defaultEventLoopGroup.any(), configuration: TestDatabase.configuration, id: 98,
        logger: TestDatabase.logger)
    let listener = Task {
        try await connection.listen(on: channel) { notifications in
            listening.withLockedValue { $0 = true }
            for try await notification in notifications {
                received.withLockedValue { $0.append(notification.payload) }
            }
        }
    }
    #expect(await eventually(60) { listening.withLockedValue { $0 } })
    try await body()
    _ = await eventually(60) { until(received.withLockedValue { $0 }) }
    listener.cancel()
    try? await connection.close()
    _ = await listener.result
    return received.withLockedValue { $0 }
}

/// Sets the server's `synchronous_commit` (`ALTER SYSTEM`, then a reload).
private func setServerSynchronousCommit(_ setting: String) async throws {
    try await TestDatabase.sql(PostgresQuery(unsafeSQL: "ALTER SYSTEM SET synchronous_commit = '\(setting)'"))
    try await TestDatabase.sql("SELECT pg_reload_conf()::text")
    #expect(await eventually(60) { (try? await TestDatabase.sql("SHOW synchronous_commit")) == [setting] })
}

/// Against a real server: what `send` promises — durability, call order, group commit.
extension Database {
    @Suite(.serialized, .enabled(if: TestDatabase.available, "no PostgreSQL: set PGHOST (see .ci/postgres)"))
    struct PublishingTests {
        @Test func sendsStartedMillisecondsApartWhileTheConnectionOpensCommitInCallOrder() async throws {
            let topic = TestDatabase.topic("call-order")
            let subject = try feed(topic, of: Int.self)
            var sends: [Task<Int64, any Error>] = []
            for i in 0..<16 {
                sends.append(Task.detached { try await subject.send(i) })
                try await Task.sleep(for: .milliseconds(3))
            }
            var sequences: [Int64] = []
            for send in sends { sequences.append(try await send.value) }
            #expect(sequences == Array(1...16))
            #expect(try await rows(of: topic) == (0..<16).map { "\($0 + 1)=\($0)" })
        }

        /// Swift's `String` equality is canonical equivalence; PostgreSQL compares bytes. Two
        /// topics spelled "café" with a precomposed and a combining accent are two topics, also
        /// when their values share one transaction.
        @Test func topicsEqualOnlyByUnicodeEquivalenceKeepTheirOwnValuesInOneBatch() async throws {
            let base = TestDatabase.topic("unicode")
            let composed = base + "-caf\u{E9}", decomposed = base + "-cafe\u{301}"
            #expect(composed == decomposed && Array(composed.utf8) != Array(decomposed.utf8))
            let publisher = Publisher(configuration: try TestDatabase.configuration, logger: TestDatabase.logger, maxConnections: 1)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<40 {
                    let topic = i % 2 == 0 ? composed : decomposed
                    group.addTask {
                        _ = try await publisher.publish(
                            topic: topic, channel: PostgresReplaySubject<Int>.channel(for: topic),
                            json: i % 2 == 0 ? "\"composed\"" : "\"decomposed\"", capacity: 100, maxAge: nil)
                    }
                }
                try await group.waitForAll()
            }
            await publisher.close()
            let composedRows = try await rows(of: composed), decomposedRows = try await rows(of: decomposed)
            #expect(composedRows.count == 20 && composedRows.allSatisfy { $0.hasSuffix("\"composed\"") })
            #expect(decomposedRows.count == 20 && decomposedRows.allSatisfy { $0.hasSuffix("\"decomposed\"") })
        }

        /// A lane whose connection stops answering (a half-open connection: SIGSTOP on its
        /// backend) fails its batch after the commit timeout instead of holding every send queued
        /// on it for as long as TCP takes to notice; the next send opens a new connection.
        @Test(.enabled(if: getuid() == 0, "needs to stop a server process (root)"))
        func aPublishingConnectionThatStopsAnsweringFailsItsSendsWithinTheTimeoutAndTheNextSendGoesThrough() async throws {
            let topic = TestDatabase.topic("silent-lane")
            let name = "ripple publisher \(topic)".prefix(63)
            let publisher = Publisher(configuration: Connections.named(try TestDatabase.configuration, String(name)),
                                      logger: TestDatabase.logger, maxConnections: 1, commitTimeout: .seconds(1))
            func send(_ value: Int) async throws -> Int64 {
                try await publisher.publish(topic: topic, channel: PostgresReplaySubject<Int>.channel(for: topic),
                                            json: "\(value)", capacity: 100, maxAge: nil)
            }
            _ = try await send(0)
            let pids = try await TestDatabase.sql("SELECT pid::text FROM pg_stat_activity WHERE application_name = \(String(name))")
            let pid = try #require(pids.first.flatMap { $0 }.flatMap { pid_t($0) })
            #expect(kill(pid, SIGSTOP) == 0)
            defer { kill(pid, SIGCONT) }
            let started = ContinuousClock.now
            await #expect(throws: Publisher.CommitTimedOut.self) { _ = try await send(1) }
            #expect(ContinuousClock.now - started < .seconds(20), "bounded by the timeout, not by TCP")
            kill(pid, SIGCONT)
            _ = try await send(2)
            #expect(try await rows(of: topic).last?.hasSuffix("=2") == true)
            await publisher.close()
        }

        @Test func concurrentSendsShareTransactionsInOneGapFreeOrderWithOneBareNotificationEach() async throws {
            let topic = TestDatabase.topic("group-commit")
            let subject = try feed(topic)
            let senders = 8, each = 50
            let acknowledged = NIOLockedValueBox<[Int64: String]>([:])
            let payloads = try await notifications(on: subject.channel, during: {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for sender in 0..<senders {
                        group.addTask {
                            for i in 0..<each {
                                let value = "s\(sender)-\(i)"
                                let sequence = try await subject.send(value)
                                acknowledged.withLockedValue { $0[sequence] = value }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }, until: { $0.last == "\(senders * each)" })
            let stored = try await rows(of: topic)
            // Gap-free, exactly once, each sender's values in the order it sent them.
            #expect(stored.count == senders * each)
            let byAcknowledgement = acknowledged.withLockedValue { $0 }.sorted { $0.key < $1.key }.map { "\($0.key)=\"\($0.value)\"" }
            #expect(stored == byAcknowledgement)
            #expect(stored.map { $0.prefix { $0 != "=" } } == (1...(senders * each)).map { "\($0)"[...] })
            for sender in 0..<senders {
                let mine = stored.compactMap { row in row.split(separator: "\"")[1].hasPrefix("s\(sender)-") ? String(row.split(separator: "\"")[1]) : nil }
                #expect(mine == (0..<each).map { "s\(sender)-\($0)" })
            }
            // Shared transactions: far fewer than one per value.
            let transactions = try await TestDatabase.sql("SELECT count(DISTINCT xmin::text)::text FROM ripple_values WHERE topic = \(topic)")
            let count = Int(transactions.first.flatMap { $0 } ?? "") ?? 0
            #expect(count > 0 && count <= senders * each / 2, "\(count) transactions for \(senders * each) values")
            // One notification per transaction, carrying only the last sequence it committed.
            #expect(payloads.allSatisfy { Int64($0) != nil && !$0.hasPrefix("+") }, "\(payloads.prefix(3))")
            #expect(payloads.count == count)
            #expect(payloads.compactMap { Int64($0) } == payloads.compactMap { Int64($0) }.sorted())
            // The time still grows with the sequence.
            let ordered = try await TestDatabase.sql(
                """
                SELECT bool_and(created_at >= previous)::text FROM (
                    SELECT created_at, lag(created_at) OVER (ORDER BY seq) AS previous
                    FROM ripple_values WHERE topic = \(topic)) AS t
                """)
            #expect(ordered == ["true"])
        }

        @Test(
            .enabled(if: TestDatabase.canCrash, "set RIPPLE_PG_CRASH (see .ci/postgres)"),
            arguments: ["off", "on"])
        func everyAcknowledgedValueSurvivesAServerCrashWhateverTheServersSynchronousCommit(_ setting: String) async throws {
            try await setServerSynchronousCommit(setting)
            let topic = TestDatabase.topic("durable-\(setting)")
            let subject = try feed(topic, capacity: 10_000)
            let acknowledged = NIOLockedValueBox<[Int64: String]>([:])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for sender in 0..<8 {
                    group.addTask {
                        for i in 0..<150 {
                            let value = "s\(sender)-\(i)"
                            let sequence = try await subject.send(value)
                            acknowledged.withLockedValue { $0[sequence] = value }
                        }
                    }
                }
                try await group.waitForAll()
            }
            try TestDatabase.crashServer()
            try await setServerSynchronousCommit("off")  // what .ci/postgres sets
            let expected = acknowledged.withLockedValue { $0 }.sorted { $0.key < $1.key }
            let stored = try await rows(of: topic)
            let missing = Set(expected.map { "\($0.key)=\"\($0.value)\"" }).subtracting(stored)
            #expect(missing.isEmpty, "\(missing.count) of \(expected.count) acknowledged values vanished")
            // A new instance reads every one of them, once, in sequence order.
            let follower = try feed(topic, capacity: 10_000)
            let received = Recorder<String>()
            received.attach(follower)
            let running = try await Running(follower)
            #expect(await eventually(60) { received.values.count >= expected.count })
            #expect(received.values == expected.map(\.value))
            await running.stop()
        }
    }
}
