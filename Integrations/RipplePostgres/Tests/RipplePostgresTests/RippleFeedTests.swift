import Foundation
import Testing

/// `ripple-feed` as a user runs it.
extension Database {
    @Suite(.serialized) struct RippleFeedTests {
        @Test(.enabled(if: TestDatabase.available))
        func publishThenFollowPrintsTheHistoryThenLiveValuesAndExitsAfterCount() async throws {
            let topic = TestDatabase.topic("feed")
            let published = try await Feed.run(["publish", "--topic", topic, "one", "two words", "three"])
            #expect(published.status == 0 && published.stderr.isEmpty, "\(published.stderr)")
            let follower = try Feed.Child(["follow", "--topic", topic, "--history", "2", "--count", "4"])
            #expect(await eventually { follower.lines.count == 2 })
            #expect(try await Feed.run(["publish", "--topic", topic, "four", "five", "six"]).status == 0)
            #expect(await follower.wait() == 0, "\(follower.errorText)")
            #expect(follower.lines == ["two words", "three", "four", "five"])
        }

        @Test(.enabled(if: TestDatabase.available))
        func followWithoutHistoryPrintsOnlyLiveValuesAndExitsZeroOnSigterm() async throws {
            let topic = TestDatabase.topic("sigterm")
            #expect(try await Feed.run(["publish", "--topic", topic, "old"]).status == 0)
            let follower = try Feed.Child(["follow", "--topic", topic])
            try await Task.sleep(for: .milliseconds(700))
            #expect(try await Feed.run(["publish", "--topic", topic, "new"]).status == 0)
            #expect(await eventually { follower.lines == ["new"] })
            follower.process.terminate()  // SIGTERM
            #expect(await follower.wait() == 0, "\(follower.errorText)")
            #expect(follower.lines == ["new"])

            let interrupted = try Feed.Child(["follow", "--topic", topic])
            try await Task.sleep(for: .milliseconds(500))
            interrupted.process.interrupt()  // SIGINT
            #expect(await interrupted.wait() == 0, "\(interrupted.errorText)")
        }

        @Test(arguments: [
            (["publish", "--topic", "t"], "publish needs at least one VALUE"),
            (["follow"], "follow needs --topic T"),
            (["follow", "--topic", "t", "--count", "0"], "--count needs a whole number of at least 1, got '0'"),
            (["follow", "--topic", "t", "--history", "x"], "--history needs a whole number of at least 0, got 'x'"),
            (["follow", "--topic", "t", "--bogus"], "unknown option '--bogus' for follow"),
            (["subscribe"], "unknown command 'subscribe': expected publish, follow or migrate"),
            (["publish", "--topic", String(repeating: "t", count: 3_000), "v"],
             "bad --topic: a topic is at most 256 bytes of UTF-8, this one has 3000"),
            (["follow", "--topic", String(repeating: "é", count: 200)],
             "bad --topic: a topic is at most 256 bytes of UTF-8, this one has 400"),
            ([], "no command."),
        ])
        func aBadOptionIsOneLineOnStandardErrorAndExitTwo(arguments: [String], message: String) async throws {
            let result = try await Feed.run(arguments)
            #expect(result.status == 2)
            #expect(result.lines.isEmpty)
            #expect(result.stderr.hasPrefix("ripple-feed: \(message)"), "\(result.stderr)")
            #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(result.stderr)")
        }

        @Test(arguments: [["publish", "--topic", "t", "v"], ["follow", "--topic", "t"]])
        func anUnreachableDatabaseIsOneLineOnStandardErrorAndExitTwo(arguments: [String]) async throws {
            let result = try await Feed.run(arguments, environment: ["PGHOST": "127.0.0.1", "PGPORT": "1"])
            #expect(result.status == 2)
            #expect(result.stderr.hasPrefix("ripple-feed: cannot "), "\(result.stderr)")
            #expect(result.stderr.contains("127.0.0.1:1"), "\(result.stderr)")
            #expect(result.stderr.filter { $0 == "\n" }.count == 1, "\(result.stderr)")
        }

        @Test func aBadEnvironmentVariableIsNamed() async throws {
            let result = try await Feed.run(["follow", "--topic", "t"], environment: ["PGPORT": "http"])
            #expect(result.status == 2)
            #expect(result.stderr == "ripple-feed: PGPORT: 'http' is not a port number\n")
        }
    }
}
