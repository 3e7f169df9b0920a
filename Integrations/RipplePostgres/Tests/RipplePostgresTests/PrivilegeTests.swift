import Foundation
import Logging
import PostgresNIO
import Ripple
import Testing

@testable import RipplePostgres

/// Roles with only the privileges their part needs.
extension Database {
    @Suite(.serialized, .enabled(if: TestDatabase.available, "no PostgreSQL: set PGHOST (see .ci/postgres)"))
    struct PrivilegeTests {
        private func subject(_ topic: String, as user: String? = nil) throws -> PostgresReplaySubject<String> {
            let configuration = try user.map { try TestDatabase.configuration(as: $0) } ?? TestDatabase.configuration
            return PostgresReplaySubject<String>(topic: topic, capacity: 10, configuration: configuration, logger: TestDatabase.logger)
        }

        @Test func aRoleWithSelectOnlyFollowsAndARoleWithTheWritesOnlyPublishes() async throws {
            let topic = TestDatabase.topic("reader")
            let owner = try subject(topic)
            try await owner.send("1")  // the tables exist
            try await TestDatabase.role("ripple_reader", grants: ["GRANT SELECT ON ripple_topics, ripple_values TO ripple_reader"])
            try await TestDatabase.role("ripple_writer", grants: [
                "GRANT SELECT, INSERT, UPDATE, DELETE ON ripple_topics, ripple_values TO ripple_writer",
            ])
            let follower = try subject(topic, as: "ripple_reader")
            let received = Recorder<String>()
            received.attach(follower)
            let running = try await Running(follower)
            #expect(received.values == ["1"])
            let cli = try Feed.Child(["follow", "--topic", topic, "--count", "1"], environment: ["PGUSER": "ripple_reader"])
            try await Task.sleep(for: .milliseconds(700))
            let writer = try subject(topic, as: "ripple_writer")
            try await writer.send("2")
            #expect(await eventually(60) { received.values == ["1", "2"] })
            #expect(await cli.wait(60) == 0, "\(cli.errorText)")
            #expect(cli.lines == ["2"])
            await running.stop()
        }

        @Test func aFunctionShadowingABuiltInOnTheSearchPathRunsNothingForThePublisherOrTheListener() async throws {
            // A role that may create functions in `public` (everyone, before PostgreSQL 15) defines
            // better-matching overloads of the built-ins the statements call.
            let topic = TestDatabase.topic("shadowed")
            try await subject(topic).send("before")  // the tables exist
            // Each shadow fails whatever calls it: a statement that still reached one fails.
            let shadows = [
                "public.cardinality(text[]) RETURNS int",
                "public.unnest(text[]) RETURNS SETOF text",
                "public.convert_to(text, text) RETURNS bytea",
                "public.encode(bytea, text) RETURNS text",
                "public.to_regclass(text) RETURNS regclass",
            ]
            do {
                for shadow in shadows {
                    try await TestDatabase.sql(PostgresQuery(unsafeSQL: """
                        CREATE OR REPLACE FUNCTION \(shadow) LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'a shadow ran'; END $$
                        """))
                }
                // New connections: the publishing statement is prepared, and the reads planned,
                // while the shadows exist.
                let feed = PostgresReplaySubject<String>(topic: topic, capacity: 10, maxAge: .seconds(600),
                                                         heartbeat: .milliseconds(100), notificationKey: try NotificationKey(Array(repeating: 7, count: 32)),
                                                         configuration: try TestDatabase.configuration, logger: TestDatabase.logger)
                let received = Recorder<String>()
                received.attach(feed)
                let running = try await Running(feed)
                let sequence = try await feed.send("after")
                #expect(sequence == 2)
                #expect(await eventually(60) { received.values.count >= 2 })
                #expect(received.values == ["before", "after"])
                try await Task.sleep(for: .milliseconds(300))  // heartbeats, with their heads query
                #expect(feed.currentConnectionState.isLive, "\(feed.currentConnectionState)")
                await running.stop()
            } catch {
                Issue.record("\(error)")
            }
            for shadow in shadows {
                let signature = shadow.components(separatedBy: " RETURNS").first!
                try await TestDatabase.sql(PostgresQuery(unsafeSQL: "DROP FUNCTION IF EXISTS \(signature)"))
            }
        }

        @Test func aRoleWithoutSelectEndsRunWithTheServersMessageInsteadOfRetryingForEver() async throws {
            let topic = TestDatabase.topic("denied")
            try await subject(topic).send("1")  // the tables exist
            try await TestDatabase.role("ripple_nobody")
            let feed = try subject(topic, as: "ripple_nobody")
            let states = Recorder<ConnectionState>()
            states.attach(feed.connectionState)
            let received = Recorder<String>()
            received.attach(feed)
            let running = Task { try await feed.run() }
            let ended = await eventually(60) { if case .stopped = feed.currentConnectionState { true } else { false } }
            if !ended { running.cancel() }
            #expect(ended, "\(states.values.map(\.description))")
            let result = await running.result
            #expect(throws: PostgresReplayError.self) { try result.get() }
            if case .failure(let error) = result {
                #expect("\(error)".contains("permission denied for table ripple_"), "\(error)")
            }
            let disconnects = states.values.filter { if case .disconnected = $0 { true } else { false } }
            #expect(disconnects.count == 1, "\(states.values.map(\.description))")
            for state in disconnects {
                #expect(state.description.contains("permission denied") && state.description.contains("42501"), "\(state)")
                #expect(!state.description.contains("Generic description"), "\(state)")
            }
            #expect(received.errors.count == 1 && received.values.isEmpty)
        }

        @Test func aDisconnectionShowsTheServersMessageNotAGenericOne() async throws {
            let topic = TestDatabase.topic("message")
            let follower = try await Running(try subject(topic))
            let states = Recorder<ConnectionState>()
            states.attach(follower.feed.connectionState)
            #expect(try await TestDatabase.terminateListeners(of: topic) == 1)
            #expect(await eventually(60) { states.values.contains { if case .disconnected = $0 { true } else { false } } })
            let text = states.values.map(\.description).joined(separator: "; ")
            #expect(text.contains("terminating connection due to administrator command") && text.contains("57P01"), "\(text)")
            await follower.stop()
        }

        @Test func migrateCreatesTheTablesAndIsIdempotent() async throws {
            for _ in 0..<2 {
                let result = try await Feed.run(["migrate"])
                #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
            }
            #expect(try await TestDatabase.sql("SELECT (to_regclass('ripple_topics') IS NOT NULL AND to_regclass('ripple_values') IS NOT NULL)::text") == ["true"])
        }
    }
}
