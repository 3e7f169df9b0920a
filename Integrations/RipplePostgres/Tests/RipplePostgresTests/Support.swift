import Foundation
import Logging
import PostgresNIO
import Ripple
import struct NIOConcurrencyHelpers.NIOLockedValueBox
import Testing

@testable import RipplePostgres

/// Every suite that uses the server runs inside this one, one test at a time: a test restarts the
/// server, and `ripple-feed` processes of one suite must not race another suite's listeners.
@Suite(.serialized) enum Database {}

/// The server the tests run against: libpq's variables (`.ci/postgres start` prints them).
/// Without `PGHOST` the database tests are skipped, unless `RIPPLE_PG_REQUIRED` is set (CI sets
/// it, so an unreachable server fails them instead).
enum TestDatabase {
    static let environment = ProcessInfo.processInfo.environment
    static let available = environment["PGHOST"] != nil || environment["RIPPLE_PG_REQUIRED"] != nil
    static let canRestart = environment["RIPPLE_PG_RESTART"] != nil
    /// Whether the tests can crash the server (`RIPPLE_PG_CRASH`: `pg_ctl -m immediate restart`).
    static let canCrash = environment["RIPPLE_PG_CRASH"] != nil

    static var configuration: PostgresConnection.Configuration {
        get throws { try .environment() }
    }

    static let logger: Logger = {
        var logger = Logger(label: "ripple-postgres-tests")
        logger.logLevel = environment["RIPPLE_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .error
        return logger
    }()

    /// A topic no other test uses.
    static func topic(_ name: String) -> String {
        "test-\(name)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// The configuration, logging in as `user` (a role made with `role(_:)`).
    static func configuration(as user: String, database: String? = nil) throws -> PostgresConnection.Configuration {
        var variables = environment
        variables["PGUSER"] = user
        variables["PGDATABASE"] = database ?? environment["PGDATABASE"] ?? environment["PGUSER"] ?? "postgres"
        return try .environment(variables)
    }

    /// Creates the login role `name` if missing (roles are the cluster's: kept across runs), with
    /// no privilege on the tables; then runs `grants` (for example `GRANT SELECT ON … TO name`).
    static func role(_ name: String, grants: [String] = []) async throws {
        try await sql(PostgresQuery(unsafeSQL: """
            DO $$ BEGIN CREATE ROLE \(name) LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$
            """))
        try await sql(PostgresQuery(unsafeSQL: """
            DO $$ BEGIN IF to_regclass('ripple_values') IS NOT NULL AND to_regclass('ripple_topics') IS NOT NULL THEN
                REVOKE ALL ON ripple_topics, ripple_values FROM \(name);
            END IF; END $$
            """))
        for grant in grants { try await sql(PostgresQuery(unsafeSQL: grant)) }
    }

    /// Runs `query` on a connection of its own; returns the rows' first column as text.
    @discardableResult
    static func sql(_ query: PostgresQuery, as user: String? = nil, database: String? = nil) async throws -> [String?] {
        let configuration = user != nil || database != nil
            ? try configuration(as: user ?? environment["PGUSER"] ?? "postgres", database: database) : try configuration
        let connection = try await PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(), configuration: configuration, id: 99, logger: logger)
        defer { Task { try? await connection.close() } }
        var result: [String?] = []
        for try await row in try await connection.query(query, logger: logger) {
            result.append(try row.makeRandomAccess()[0].decode(String?.self))
        }
        try await connection.close()
        return result
    }

    /// The payloads of the notifications on `channel` while `body` runs, as any role that LISTENs
    /// sees them (waits up to 10 s after `body` for the first one).
    static func capture(channel: String, during body: () async throws -> Void) async throws -> [String] {
        let connection = try await PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(), configuration: try configuration, id: 98, logger: logger)
        let payloads = NIOLockedValueBox<[String]>([])
        let listening = Task {
            try await connection.listen(on: channel) { notifications in
                for try await notification in notifications { payloads.withLockedValue { $0.append(notification.payload) } }
            }
        }
        // Listening once a probe ("0": a hint at or below every cursor) comes back.
        var probes = 0
        repeat {
            probes += 1
            try #require(probes <= 30, "LISTEN \(channel) never took effect")
            try await sql("SELECT pg_notify(\(channel), '0')::text")
        } while !(await eventually(2) { payloads.withLockedValue { $0.contains("0") } })
        try await body()
        _ = await eventually(10) { payloads.withLockedValue { $0.contains { $0 != "0" } } }
        try await Task.sleep(for: .milliseconds(100))
        listening.cancel()
        _ = await listening.result
        try await connection.close()
        return payloads.withLockedValue { $0 }.filter { $0 != "0" }
    }

    /// Terminates the listener connections of `topic`'s subjects; returns how many.
    static func terminateListeners(of topic: String) async throws -> Int {
        let name = String("ripple listener \(topic)".prefix(63))
        return try await sql(
            "SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity WHERE application_name = \(name)"
        ).count
    }

    /// Restarts the server (`RIPPLE_PG_RESTART`, a shell command `.ci/postgres` prints).
    /// Spawned and reaped with `posix_spawn`/`waitpid`: `pg_ctl` leaves the new server running
    /// in the background, and Foundation's `Process` did not see the shell exit then.
    static func restartServer() throws {
        try shell(environment["RIPPLE_PG_RESTART"]!)
    }

    /// Crashes the server and starts it again (`RIPPLE_PG_CRASH`, `pg_ctl -m immediate restart`:
    /// no checkpoint, what was only in the server's memory is lost, recovery replays the WAL).
    static func crashServer() throws {
        try shell(environment["RIPPLE_PG_CRASH"]!)
    }

    private static func shell(_ command: String) throws {
        var pid = pid_t()
        let arguments = ["/bin/sh", "-c", command + " >/dev/null 2>&1"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ)
        try #require(spawned == 0, "posix_spawn failed: \(spawned)")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        #expect(status == 0, "\(command) failed with status \(status)")
    }
}

/// Log records, kept to check what reaches a log.
final class CapturedLogs: Sendable {
    struct Record: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }
    private let records = NIOLockedValueBox<[Record]>([])

    /// A logger writing here (level `.info`).
    func logger(_ label: String = "captured") -> Logger {
        var logger = Logger(label: label) { _ in Handler(sink: self) }
        logger.logLevel = .info
        return logger
    }

    var all: [Record] { records.withLockedValue { $0 } }

    private struct Handler: LogHandler {
        let sink: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let record = Record(level: event.level, message: "\(event.message)",
                                metadata: merged.mapValues { "\($0)" })
            sink.records.withLockedValue { $0.append(record) }
        }
    }
}

/// What a subscription received, in order.
final class Recorder<Value: Sendable>: Sendable {
    private struct Record {
        var values: [Value] = []
        var errors: [any Error] = []
        var completions = 0
    }
    private let record = NIOLockedValueBox(Record())

    init() {}

    /// Subscribes to `signal`, recording every event.
    @discardableResult
    func attach<S: SignalProtocol>(_ signal: S) -> any Disposable where S.Value == Value {
        signal.subscribe(
            next: { value in self.record.withLockedValue { $0.values.append(value) } },
            error: { error in self.record.withLockedValue { $0.errors.append(error) } },
            completed: { self.record.withLockedValue { $0.completions += 1 } })
    }

    var values: [Value] { record.withLockedValue { $0.values } }
    var errors: [any Error] { record.withLockedValue { $0.errors } }
    var completions: Int { record.withLockedValue { $0.completions } }
}

/// Waits up to `seconds` for `condition`.
func eventually(_ seconds: Double = 20, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return try await condition()
}

/// A subject's `run()` in a task of its own.
struct Running<Value: Codable & Sendable>: Sendable {
    let feed: PostgresReplaySubject<Value>
    let task: Task<Void, any Error>

    /// Starts `feed.run()` and waits until the listener is live.
    init(_ feed: PostgresReplaySubject<Value>) async throws {
        self.feed = feed
        task = Task { try await feed.run() }
        let live = await eventually { feed.currentConnectionState.isLive }
        try #require(live, "the listener did not go live: \(feed.currentConnectionState)")
    }

    /// Cancels `run()` and waits for it to return.
    func stop() async {
        task.cancel()
        _ = await task.result
    }
}

/// The built `ripple-feed`, next to the test bundle.
enum Feed {
    static var executable: URL {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.pathComponents.count > 1 {
            let candidate = url.deletingLastPathComponent().appendingPathComponent("ripple-feed")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            url = url.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/ripple-feed")
    }

    /// A started `ripple-feed` process, its output read as it comes.
    final class Child: Sendable {
        let process: Process
        /// What the process wrote; a class of its own, so the pipes' handlers do not hold the child.
        private final class Output: Sendable {
            let data = NIOLockedValueBox((stdout: Data(), stderr: Data()))
        }
        private let output = Output()

        /// Starts `ripple-feed` with `arguments`.
        convenience init(_ arguments: [String], environment: [String: String] = [:]) throws {
            try self.init(executable: Feed.executable, arguments, environment: environment)
        }

        /// Starts `executable` (a shell, for a pipeline) with `arguments`, in the test database's environment.
        init(executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws {
            process = Process()
            process.executableURL = executable
            process.arguments = arguments
            process.environment = TestDatabase.environment.merging(environment) { $1 }
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            out.fileHandleForReading.readabilityHandler = { [output] handle in
                let data = handle.availableData
                output.data.withLockedValue { $0.stdout.append(data) }
            }
            err.fileHandleForReading.readabilityHandler = { [output] handle in
                let data = handle.availableData
                output.data.withLockedValue { $0.stderr.append(data) }
            }
            try process.run()
        }

        var lines: [String] { text.split(separator: "\n").map(String.init) }
        var text: String { output.data.withLockedValue { String(decoding: $0.stdout, as: UTF8.self) } }
        var errorText: String { output.data.withLockedValue { String(decoding: $0.stderr, as: UTF8.self) } }

        /// Waits for the process to exit (up to `seconds`, then kills it); returns its status.
        func wait(_ seconds: Double = 30) async -> Int32 {
            let exited = await eventually(seconds) { !process.isRunning }
            if !exited { process.terminate() }
            process.waitUntilExit()
            try? await Task.sleep(for: .milliseconds(50))  // the last output
            return exited ? process.terminationStatus : -1
        }
    }

    /// Runs `ripple-feed` to the end.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, lines: [String], stderr: String) {
        let child = try Child(arguments, environment: environment)
        let status = await child.wait()
        return (status, child.lines, child.errorText)
    }
}
