import Foundation
import PostgresNIO
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
            (["--bogus"], "unknown command '--bogus': expected publish, follow or migrate"),
            (["help", "subscribe"], "no help for 'subscribe': commands are publish, follow and migrate"),
            (["publish", "--topic", "t", "--json", "v"], "unknown option '--json' for publish"),
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

        @Test(arguments: [["--help"], ["-h"], ["help"]])
        func helpNamesEveryCommandOptionAndVariableOnStandardOutputAndExitsZero(arguments: [String]) async throws {
            // An unreachable server: help never connects.
            let result = try await Feed.run(arguments, environment: ["PGHOST": "127.0.0.1", "PGPORT": "1"])
            #expect(result.status == 0)
            #expect(result.stderr.isEmpty, "\(result.stderr)")
            let text = result.lines.joined(separator: "\n")
            for word in ["publish", "follow", "migrate", "help", "--topic", "--capacity", "--history", "--count",
                         "--json", "--help", "PGHOST", "PGPORT", "PGUSER", "PGPASSWORD", "PGDATABASE", "PGSSLMODE",
                         "RIPPLE_FEED_LOG", "Exit status"] {
                #expect(text.contains(word), "no \(word) in: \(text)")
            }
        }

        @Test(arguments: [
            (["publish", "--help"], ["ripple-feed publish", "--topic", "--capacity", "PGHOST"]),
            (["follow", "--help"], ["ripple-feed follow", "--topic", "--history", "--count", "--json", "PGHOST"]),
            (["migrate", "--help"], ["ripple-feed migrate", "PGHOST"]),
            (["help", "follow"], ["ripple-feed follow", "--json"]),
            (["follow", "--topic", "t", "-h"], ["ripple-feed follow", "--json"]),
        ])
        func aCommandsHelpNamesItsOptionsAndExitsZero(arguments: [String], words: [String]) async throws {
            let result = try await Feed.run(arguments, environment: ["PGHOST": "127.0.0.1", "PGPORT": "1"])
            #expect(result.status == 0)
            #expect(result.stderr.isEmpty, "\(result.stderr)")
            let text = result.lines.joined(separator: "\n")
            for word in words { #expect(text.contains(word), "no \(word) in: \(text)") }
            let others = ["publish", "follow", "migrate"].filter { !words[0].hasSuffix($0) }
            for other in others { #expect(!text.contains("ripple-feed \(other)"), "\(text)") }
        }

        @Test(.enabled(if: TestDatabase.available))
        func followExitsZeroQuietlyOnceItsReaderHasGone() async throws {
            let topic = TestDatabase.topic("pipe")
            #expect(try await Feed.run(["publish", "--topic", topic, "first", "second"]).status == 0)
            // The shell's status is follow's own; `head -1` reads one line and exits.
            let pipeline = try Feed.Child(
                executable: URL(fileURLWithPath: "/bin/bash"),
                ["-c", #""$0" follow --topic "$1" --history 2 | head -1; exit "${PIPESTATUS[0]}""#, Feed.executable.path, topic])
            #expect(await eventually { pipeline.text == "first\n" })
            try await Task.sleep(for: .milliseconds(300))  // head has exited: the pipe has no reader
            // Follow notices at its next write (as `tail -f | head -1` does): publish until it has.
            var published = 0
            while pipeline.process.isRunning && published < 20 {
                #expect(try await Feed.run(["publish", "--topic", topic, "later \(published)"]).status == 0)
                published += 1
                _ = await eventually(1) { !pipeline.process.isRunning }
            }
            #expect(await pipeline.wait() == 0, "\(pipeline.errorText)")
            #expect(pipeline.process.terminationReason == .exit)
            #expect(pipeline.errorText.isEmpty, "\(pipeline.errorText)")
            #expect(pipeline.text == "first\n")
        }

        @Test(.enabled(if: TestDatabase.available))
        func aValueWithALineBreakPrintsAsOneEscapedLineAndWithJsonAsTheJsonStored() async throws {
            let topic = TestDatabase.topic("newline")
            let values = ["line one\nline two", "cr\r\nlf", "plain", #"quote " slash / backslash \"#]
            #expect(try await Feed.run(["publish", "--topic", topic, "--"] + values).status == 0)

            let plain = try await Feed.run(["follow", "--topic", topic, "--history", "4", "--count", "4"])
            #expect(plain.status == 0, "\(plain.stderr)")
            #expect(plain.lines == [#"line one\nline two"#, #"cr\r\nlf"#, "plain", #"quote " slash / backslash \"#])

            let json = try await Feed.run(["follow", "--topic", topic, "--history", "4", "--count", "4", "--json"])
            #expect(json.status == 0, "\(json.stderr)")
            let stored = try await TestDatabase.sql("SELECT payload FROM ripple_values WHERE topic = \(topic) ORDER BY seq")
            #expect(json.lines == stored.compactMap { $0 })
            #expect(json.lines.count == 4)
            #expect(try json.lines.map { try JSONDecoder().decode(String.self, from: Data($0.utf8)) } == values)
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
