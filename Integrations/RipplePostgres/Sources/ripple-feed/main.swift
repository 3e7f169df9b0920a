// ripple-feed: publish to and follow a topic shared through PostgreSQL (PostgresReplaySubject).
//
//     ripple-feed publish --topic T VALUE...          sends each value in order; exit 0 once all are committed
//     ripple-feed follow  --topic T [--history N] [--count K]
//                                                     prints the last N retained values (default 0), then each
//                                                     live value, one per line; exits 0 after K values in all,
//                                                     or on SIGTERM/SIGINT
//     ripple-feed migrate                             creates the tables if missing; exit 0
//
// The connection comes from libpq's variables (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE); the
// tables are created if missing (publish, follow: only when they are missing, so a role with
// SELECT only can follow). A bad option or topic, an unreachable database: one line on standard
// error, exit 2. RIPPLE_FEED_LOG=debug|info|warning logs to standard error (default: nothing).
import Foundation
import Logging
import PostgresNIO
import Ripple
import RipplePostgres
import ServiceLifecycle

/// Writes one line to standard output at once (unbuffered: a reader in another process sees it now).
func printLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let usage = """
    usage: ripple-feed publish --topic T [--capacity C] VALUE...
           ripple-feed follow  --topic T [--history N] [--count K]
           ripple-feed migrate
    """

/// Prints `message` as one line on standard error and exits 2.
func fail(_ message: String) -> Never {
    let line = message.split(whereSeparator: \.isNewline).joined(separator: " ")
    FileHandle.standardError.write(Data("ripple-feed: \(line)\n".utf8))
    exit(2)
}

struct Options {
    var command: String
    var topic: String?
    var history = 0
    var count: Int?
    var capacity = 1_000
    var values: [String] = []
}

func parse(_ arguments: [String]) -> Options {
    guard let command = arguments.first else { fail("no command. \(usage)") }
    guard ["publish", "follow", "migrate"].contains(command) else {
        if command == "-h" || command == "--help" || command == "help" {
            printLine(usage)
            exit(0)
        }
        fail("unknown command '\(command)': expected publish, follow or migrate")
    }
    var options = Options(command: command)
    var rest = arguments.dropFirst()
    func number(_ name: String, minimum: Int) -> Int {
        guard let text = rest.popFirst() else { fail("\(name) needs a number") }
        guard let value = Int(text), value >= minimum else { fail("\(name) needs a whole number of at least \(minimum), got '\(text)'") }
        return value
    }
    while let argument = rest.popFirst() {
        switch argument {
        case "--topic":
            guard let topic = rest.popFirst(), !topic.isEmpty else { fail("--topic needs a name") }
            options.topic = topic
        case "--history" where command == "follow": options.history = number("--history", minimum: 0)
        case "--count" where command == "follow": options.count = number("--count", minimum: 1)
        case "--capacity" where command == "publish": options.capacity = number("--capacity", minimum: 1)
        case "--":
            options.values.append(contentsOf: rest)
            rest = []
        default:
            if argument.hasPrefix("--") { fail("unknown option '\(argument)' for \(command)") }
            guard command == "publish" else { fail("\(command) takes no values, got '\(argument)'") }
            options.values.append(argument)
        }
    }
    if command == "migrate" { return options }
    guard let topic = options.topic else { fail("\(command) needs --topic T") }
    do {
        try PostgresReplaySubject<String>.validate(topic: topic)
    } catch {
        fail("bad --topic: \(error)")
    }
    if command == "publish", options.values.isEmpty { fail("publish needs at least one VALUE") }
    return options
}

let options = parse(Array(CommandLine.arguments.dropFirst()))
let configuration: PostgresConnection.Configuration
do {
    configuration = try .environment()
} catch {
    fail("\(error)")
}
let logger: Logger = {
    var logger = Logger(label: "ripple-feed")
    logger.logLevel = ProcessInfo.processInfo.environment["RIPPLE_FEED_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
    return logger
}()
let target = configuration.host.map { "\($0):\(configuration.port ?? 5432)" } ?? configuration.unixSocketPath ?? "?"

/// One line for an error from the database layer (postgres-nio's description hides the details).
func describe(_ error: any Error) -> String {
    if let error = error as? PSQLError {
        if let message = error.serverInfo?[.message] { return message }
        if let underlying = error.underlying { return "\(underlying)" }
        return "\(error.code)"
    }
    return "\(error)"
}

switch options.command {
case "migrate":
    do {
        try await PostgresTopics.migrate(configuration: configuration, logger: logger)
    } catch {
        fail("cannot migrate PostgreSQL at \(target): \(describe(error))")
    }
    exit(0)

case "publish":
    let feed = PostgresReplaySubject<String>(
        topic: options.topic!, capacity: options.capacity, configuration: configuration, logger: logger)
    for value in options.values {
        do {
            try await feed.send(value)
        } catch {
            fail("cannot publish to \(options.topic!) on PostgreSQL at \(target): \(describe(error))")
        }
    }
    exit(0)

default:
    let feed = PostgresReplaySubject<String>(
        topic: options.topic!, capacity: max(options.history, 1), onMissedValues: .skip,
        configuration: configuration, logger: logger)
    let group = ServiceGroup(services: [feed], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
    let progress = Mutex((printed: 0, wasLive: false))
    _ = feed.connectionState.subscribeNext { state in
        switch state {
        case .live:
            progress.withLock { $0.wasLive = true }
        case .disconnected(let error) where !progress.withLock({ $0.wasLive }):
            fail("cannot follow \(options.topic!) on PostgreSQL at \(target): \(describe(error))")
        default:
            break
        }
    }
    _ = feed.missedValues.subscribeNext { missed in
        FileHandle.standardError.write(Data("ripple-feed: \(missed)\n".utf8))
    }
    _ = feed.subscribeNext { value in
        let (show, done): (Bool, Bool) = progress.withLock { progress in
            // With --history 0, the one value replayed at start (capacity 1) is not shown.
            if !progress.wasLive && options.history == 0 { return (false, false) }
            if let count = options.count, progress.printed >= count { return (false, false) }
            progress.printed += 1
            return (true, options.count == progress.printed)
        }
        guard show else { return }
        printLine(value)
        if done { Task { await group.triggerGracefulShutdown() } }
    }
    do {
        try await group.run()
    } catch {
        fail("following \(options.topic!): \(describe(error))")
    }
    exit(0)
}

import Synchronization
