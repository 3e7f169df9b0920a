// ripple-feed: publish to and follow a topic shared through PostgreSQL (PostgresReplaySubject).
// `ripple-feed --help` prints every command, option and variable (the text is `help` below).
//
// Standard output is written with write(2), SIGPIPE ignored: when the reader goes away
// (`ripple-feed follow … | head -1`), the next write fails with EPIPE and the tool exits 0, as
// Unix tools do. A bad option or topic, an unreachable database: one line on standard error,
// exit 2.
import Foundation
import Logging
import PostgresNIO
import Ripple
import RipplePostgres
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// A closed reader makes write(2) fail with EPIPE (handled in `writeAll`) instead of killing us.
signal(SIGPIPE, SIG_IGN)

/// Writes all of `text` to `descriptor`; returns the `errno` of a failed write, or nil.
func writeAll(_ text: String, to descriptor: Int32) -> Int32? {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            return errno
        }
        bytes = bytes.dropFirst(written)
    }
    return nil
}

/// Writes one line to standard output at once (unbuffered: a reader in another process sees it
/// now). A reader that has gone away (EPIPE) is a normal end: exit 0.
func printLine(_ line: String) {
    guard let error = writeAll(line + "\n", to: STDOUT_FILENO) else { return }
    if error == EPIPE { exit(0) }
    fail("cannot write to standard output: \(String(cString: strerror(error)))")
}

/// Prints `message` as one line on standard error and exits 2.
func fail(_ message: String) -> Never {
    let line = message.split(whereSeparator: \.isNewline).joined(separator: " ")
    _ = writeAll("ripple-feed: \(line)\n", to: STDERR_FILENO)
    exit(2)
}

let usage = """
    usage: ripple-feed publish --topic T [--capacity C] [--] VALUE...
           ripple-feed follow  --topic T [--history N] [--count K] [--json]
           ripple-feed migrate
           ripple-feed help [COMMAND]
    """

/// What `--help` prints for each command.
let commandHelp: [String: String] = [
    "publish": """
        ripple-feed publish --topic T [--capacity C] [--] VALUE...
          Sends each VALUE (a string, stored as JSON) to topic T, in order; exits 0 once all
          are committed.
          --topic T       the topic: 1 to 256 bytes of UTF-8, no NUL
          --capacity C    how many values the topic retains (default 1000)
          --              every argument after it is a VALUE, even one starting with --
        """,
    "follow": """
        ripple-feed follow --topic T [--history N] [--count K] [--json]
          Prints the last N retained values of topic T, then each live value, one line per
          value. Exits 0 after K values in all, on SIGTERM or SIGINT, or once its reader has
          gone (ripple-feed follow --topic T | head -1).
          --topic T       the topic: 1 to 256 bytes of UTF-8, no NUL
          --history N     how many retained values to print first (default 0)
          --count K       exit after K values (default: follow until stopped)
          --json          print each value as JSON, exactly as stored: "a\\nb" for a value with
                          a newline (unambiguous: decode each line as a JSON string)
          Without --json a value is printed as it is, except that a line feed inside it is
          printed as \\n and a carriage return as \\r, so that a value is always one line
          (a value holding a backslash and an n prints the same: use --json to tell them apart).
        """,
    "migrate": """
        ripple-feed migrate
          Creates the tables (ripple_topics, ripple_values) if missing; idempotent; exits 0.
          Needs CREATE on the schema. publish and follow also create them if missing, so a
          role with SELECT only can follow once they exist.
        """,
]

/// The variables and exit statuses, shown by every help.
let environmentHelp = """
    Environment (libpq's variables):
      PGHOST            the server's host, or a directory holding its socket (default localhost)
      PGPORT            the server's port (default 5432)
      PGUSER            the role (default the login name)
      PGPASSWORD        its password
      PGDATABASE        the database (default the role's name)
      PGSSLMODE         unset, disable, allow or prefer (TLS is not used)
      RIPPLE_FEED_LOG   trace, debug, info, notice, warning or error: log to standard error (default: no log)

    Exit status: 0 done (or the reader of standard output has gone); 2 a bad command, option,
    topic or variable, an unreachable database or an error from it: one line on standard error.
    """

/// The whole help: `ripple-feed --help`, `-h`, `help`.
let help = """
    ripple-feed: publish to and follow a topic shared through PostgreSQL (RipplePostgres).

    \(usage)

    \(["publish", "follow", "migrate"].map { commandHelp[$0]! }.joined(separator: "\n\n"))

    ripple-feed help [COMMAND], ripple-feed COMMAND --help, --help, -h
      Print this help, or one command's, and exit 0.

    \(environmentHelp)
    """

/// Prints the help for `command` (nil: every command) on standard output and exits 0.
func showHelp(_ command: String?) -> Never {
    if let command {
        printLine(commandHelp[command]! + "\n\n" + environmentHelp)
    } else {
        printLine(help)
    }
    exit(0)
}

struct Options {
    var command: String
    var topic: String?
    var history = 0
    var count: Int?
    var capacity = 1_000
    var values: [String] = []
    var json = false
}

func parse(_ arguments: [String]) -> Options {
    guard let command = arguments.first else { fail("no command. \(usage)") }
    if ["-h", "--help", "help"].contains(command) {
        guard let name = arguments.dropFirst().first else { showHelp(nil) }
        guard commandHelp[name] != nil else { fail("no help for '\(name)': commands are publish, follow and migrate") }
        showHelp(name)
    }
    guard commandHelp[command] != nil else {
        fail("unknown command '\(command)': expected publish, follow or migrate (ripple-feed --help)")
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
        case "--json" where command == "follow": options.json = true
        case "--help", "-h": showHelp(command)
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

/// `value` as its JSON, exactly as `send` stored it (the same encoder): one line, unambiguous.
func jsonLine(_ value: String) -> String {
    // Encoding a String cannot fail.
    String(decoding: (try? JSONEncoder().encode(value)) ?? Data(), as: UTF8.self)
}

/// `value` as it is, except a line feed printed as `\n` and a carriage return as `\r`: one line.
func oneLine(_ value: String) -> String {
    guard value.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) else { return value }
    var line = ""
    for scalar in value.unicodeScalars {
        switch scalar {
        case "\n": line += "\\n"
        case "\r": line += "\\r"
        default: line.unicodeScalars.append(scalar)
        }
    }
    return line
}

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
    let progress = NIOLockedValueBox((printed: 0, wasLive: false))
    _ = feed.connectionState.subscribeNext { state in
        switch state {
        case .live:
            progress.withLockedValue { $0.wasLive = true }
        case .disconnected(let error) where !progress.withLockedValue({ $0.wasLive }):
            fail("cannot follow \(options.topic!) on PostgreSQL at \(target): \(describe(error))")
        default:
            break
        }
    }
    _ = feed.missedValues.subscribeNext { missed in
        let line = "\(missed)".split(whereSeparator: \.isNewline).joined(separator: " ")
        _ = writeAll("ripple-feed: \(line)\n", to: STDERR_FILENO)
    }
    _ = feed.subscribeNext { value in
        let (show, done): (Bool, Bool) = progress.withLockedValue { progress in
            // With --history 0, the one value replayed at start (capacity 1) is not shown.
            if !progress.wasLive && options.history == 0 { return (false, false) }
            if let count = options.count, progress.printed >= count { return (false, false) }
            progress.printed += 1
            return (true, options.count == progress.printed)
        }
        guard show else { return }
        printLine(options.json ? jsonLine(value) : oneLine(value))
        if done { Task { await group.triggerGracefulShutdown() } }
    }
    do {
        try await group.run()
    } catch {
        fail("following \(options.topic!): \(describe(error))")
    }
    exit(0)
}

import struct NIOConcurrencyHelpers.NIOLockedValueBox
