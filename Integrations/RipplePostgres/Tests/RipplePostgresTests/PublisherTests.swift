import Foundation
import Logging
import PostgresNIO
import struct NIOConcurrencyHelpers.NIOLockedValueBox
import Ripple
import Testing

@testable import RipplePostgres

/// How many connections named `name` the server has.
private func connections(named name: String) async throws -> Int {
    let count = try await TestDatabase.sql("SELECT count(*)::text FROM pg_stat_activity WHERE application_name = \(name)")
    return Int(count.first.flatMap { $0 } ?? "") ?? -1
}

private func isStopped(_ error: any Error) -> Bool {
    if case PostgresReplayError.stopped = error { true } else { false }
}

/// Against a real server: the publisher shared by many topics, and the ordered feeding path.
extension Database {
    @Suite(.serialized, .enabled(if: TestDatabase.available, "no PostgreSQL: set PGHOST (see .ci/postgres)"))
    struct PublisherTests {
        @Test func onePublisherServesManyTopicsOnItsFewConnectionsAndLeavesNoneOpenAfterClose() async throws {
            let name = TestDatabase.topic("pool")
            let publisher = Publisher(
                configuration: Connections.named(try TestDatabase.configuration, name), logger: TestDatabase.logger, maxConnections: 2)
            let topics = (0..<40).map { TestDatabase.topic("pool-\($0)") }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for topic in topics {
                    group.addTask {
                        for i in 0..<5 {
                            let sequence = try await publisher.publish(
                                topic: topic, channel: PostgresReplaySubject<Int>.channel(for: topic), json: "\(i)", capacity: 10, maxAge: nil)
                            #expect(sequence == Int64(i + 1))
                        }
                    }
                }
                try await group.waitForAll()
            }
            let open = try await connections(named: name)
            #expect((1...2).contains(open), "\(open) connections")
            for topic in topics.prefix(5) {
                #expect(try await TestDatabase.sql("SELECT string_agg(payload, ',' ORDER BY seq) FROM ripple_values WHERE topic = \(topic)") == ["0,1,2,3,4"])
            }
            await publisher.close()
            #expect(await eventually(60) { (try? await connections(named: name)) == 0 })
            do {
                _ = try await publisher.publish(topic: topics[0], channel: "ripple_x", json: "5", capacity: 10, maxAge: nil)
                Issue.record("a publish after close() did not throw")
            } catch {
                #expect(isStopped(error), "\(error)")
            }
        }

        @Test func aFailedTransactionFailsExactlyItsSendsAndTheTopicStaysGapFree() async throws {
            let publisher = Publisher(configuration: try TestDatabase.configuration, logger: TestDatabase.logger, maxConnections: 1)
            let good = TestDatabase.topic("good")
            // Too long for the primary key's index (random: it does not compress): every transaction holding it fails.
            let bad = TestDatabase.topic("bad") + (0..<250).map { _ in UUID().uuidString }.joined()
            let outcomes = NIOLockedValueBox<[(value: Int, sequence: Int64?)]>([])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for sender in 0..<8 {
                    group.addTask {
                        for i in 0..<20 {
                            let value = sender * 100 + i
                            let sequence = try? await publisher.publish(
                                topic: good, channel: PostgresReplaySubject<Int>.channel(for: good), json: "\(value)", capacity: 1_000, maxAge: nil)
                            outcomes.withLockedValue { $0.append((value, sequence)) }
                        }
                    }
                }
                for _ in 0..<4 {
                    group.addTask {
                        for _ in 0..<5 {
                            let sequence = try? await publisher.publish(
                                topic: bad, channel: PostgresReplaySubject<Int>.channel(for: bad), json: "0", capacity: 1_000, maxAge: nil)
                            #expect(sequence == nil)
                            try await Task.sleep(for: .milliseconds(1))
                        }
                    }
                }
                try await group.waitForAll()
            }
            let committed = outcomes.withLockedValue { $0 }.compactMap { outcome in outcome.sequence.map { ($0, outcome.value) } }.sorted { $0.0 < $1.0 }
            let stored = try await TestDatabase.sql(
                "SELECT seq::text || '=' || payload FROM ripple_values WHERE topic = \(good) ORDER BY seq")
            #expect(stored == committed.map { "\($0.0)=\($0.1)" })
            #expect(committed.map(\.0) == (0..<committed.count).map { Int64($0 + 1) })
            #expect(committed.count > 0)
            await publisher.close()
        }

        @Test func aSendWhoseCommitFailsThrowsInsteadOfReturningASequence() async throws {
            // A deferred constraint trigger fails at commit, after the statement itself completed:
            // PostgreSQL answers the statement (CommandComplete) before it commits an implicit
            // transaction, so a publisher that took that answer as the commit would report a
            // value that was never committed.
            let topic = TestDatabase.topic("commit-fails")
            try await TestDatabase.sql("""
                CREATE OR REPLACE FUNCTION ripple_test_refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF NEW.topic LIKE 'test-commit-fails-%' THEN RAISE EXCEPTION 'refused at commit'; END IF;
                    RETURN NULL;
                END $$
                """)
            try await TestDatabase.sql("DROP TRIGGER IF EXISTS ripple_test_refuse_at_commit ON ripple_values")
            try await TestDatabase.sql("""
                CREATE CONSTRAINT TRIGGER ripple_test_refuse_at_commit AFTER INSERT ON ripple_values
                DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ripple_test_refuse_at_commit()
                """)
            let publisher = Publisher(configuration: try TestDatabase.configuration, logger: TestDatabase.logger, maxConnections: 1)
            let channel = PostgresReplaySubject<Int>.channel(for: topic)
            // Twenty times: whether the commit's error or the statement's answer reaches the
            // client first is a race when only the answer is awaited.
            var acknowledged: [Int64] = []
            for _ in 0..<20 {
                if let sequence = try? await publisher.publish(topic: topic, channel: channel, json: "1", capacity: 10, maxAge: nil) {
                    acknowledged.append(sequence)
                }
            }
            try await TestDatabase.sql("DROP TRIGGER ripple_test_refuse_at_commit ON ripple_values")
            #expect(acknowledged.isEmpty, "sends returned \(acknowledged) for values never committed")
            let stored = try await TestDatabase.sql("SELECT count(*)::text FROM ripple_values WHERE topic = \(topic)")
            #expect(stored == ["0"])
            // The publisher goes on: the next send commits.
            let next = try await publisher.publish(topic: topic, channel: channel, json: "2", capacity: 10, maxAge: nil)
            #expect(next == 1)
            await publisher.close()
        }

        @Test func aThousandValuesFedFromASynchronousSignalCommitInOrder() async throws {
            let topic = TestDatabase.topic("feeding")
            let subject = PostgresReplaySubject<Int>(
                topic: topic, capacity: 2_000, configuration: try TestDatabase.configuration, logger: TestDatabase.logger)
            let failures = NIOLockedValueBox<[String]>([])
            Signal.from(0..<1_000).subscribe(subject.sendingSubscriber { value, error in
                failures.withLockedValue { $0.append("\(value): \(error)") }
            })
            let count: @Sendable () async -> [String?] = {
                (try? await TestDatabase.sql("SELECT count(*)::text FROM ripple_values WHERE topic = \(topic)")) ?? []
            }
            #expect(await eventually(60) { await count() == ["1000"] })
            #expect(try await TestDatabase.sql("SELECT string_agg(payload, ',' ORDER BY seq) FROM ripple_values WHERE topic = \(topic)")
                    == [(0..<1_000).map(String.init).joined(separator: ",")])
            #expect(failures.withLockedValue { $0 }.isEmpty)
            // Once the subject stopped, each value fed is reported, and the subscriber says it is done.
            let running = try await Running(subject)
            await running.stop()
            let sender = subject.sendingSubscriber { value, error in
                failures.withLockedValue { $0.append("\(value)") }
                #expect(isStopped(error), "\(error)")
            }
            sender.sendNext(7)
            #expect(failures.withLockedValue { $0 } == ["7"])
            #expect(sender.isDisposed)
        }
    }
}
