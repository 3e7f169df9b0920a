// ripple-feed-bench: PostgresReplaySubject beside the raw postgres-nio floor, one run, one server,
// the same payloads. For each system a receiver runs in a second process:
//   latency     — one sender, one value every millisecond (1,000 values/s, on an absolute
//                 schedule): from `send` returning in this process to the other process receiving
//                 it (CLOCK_MONOTONIC, shared by both processes), p50/p99;
//   throughput  — values sent back to back by 1 sender, then by 8 concurrent senders: values per
//                 second until the other process received the last.
// Two configurations of the subject: without a key (every notification a hint, each value read
// from the table) and with a `NotificationKey` (values delivered from the signed notification).
// The floor is plain INSERT transactions (`INSERT` of the value and `pg_notify` of it, one
// transaction per value) through postgres-nio's `PostgresClient` pool with as many connections
// as the publisher may use, and `synchronous_commit=on` like the publisher; its receiver is a
// plain LISTEN.
//
//     swift run -c release ripple-feed-bench [--latency-values 1000] [--throughput-values 10000] [--payload 100] [--pool 2]
//
// The connection comes from libpq's variables (PGHOST, PGPORT, …).
import Foundation
import Logging
import PostgresNIO
import Ripple
import RipplePostgres
import ServiceLifecycle
import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// Writes one line to standard output at once (unbuffered: a reader in another process sees it now).
func printLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ripple-feed-bench: \(message)\n".utf8))
    exit(2)
}

let configuration: PostgresConnection.Configuration
do { configuration = try .environment() } catch { fail("\(error)") }
let logger: Logger = {
    var logger = Logger(label: "ripple-feed-bench")
    logger.logLevel = .critical
    return logger
}()

/// The payload of value `index`: its index, padded to `size` bytes.
func payload(_ index: Int, size: Int) -> String {
    let head = "\(index):"
    return head + String(repeating: "x", count: max(0, size - head.utf8.count))
}

func index(of payload: String) -> Int { Int(payload.prefix { $0 != ":" })! }

/// The key of the `signed` system (publisher and receiver): for this benchmark only.
let benchmarkKey = try! NotificationKey(Array("ripple-feed-bench: a key for this benchmark only".utf8))

/// A subject for `system` (`ripple` or `signed`).
func subject(_ system: String, topic: String, capacity: Int) -> PostgresReplaySubject<String> {
    PostgresReplaySubject<String>(topic: topic, capacity: capacity, notificationKey: system == "signed" ? benchmarkKey : nil,
                                  configuration: configuration, logger: logger)
}

// MARK: Receiver (the second process)

/// `receive raw|ripple|signed TOPIC COUNT`: prints `ready`, then `INDEX NANOSECONDS` per value, exits after COUNT.
func receive(system: String, topic: String, count: Int) async throws {
    let received = NIOLockedValueBox(0)
    func got(_ text: String) -> Bool {
        let now = monotonicNanoseconds()
        printLine("\(index(of: text)) \(now)")
        return received.withLockedValue { $0 += 1; return $0 >= count }
    }
    if system == "raw" {
        let connection = try await PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(), configuration: configuration, id: 1, logger: logger)
        try await connection.listen(on: topic) { notifications in
            printLine("ready")
            for try await notification in notifications {
                if got(notification.payload) { break }
            }
        }
        try await connection.close()
    } else {
        let feed = subject(system, topic: topic, capacity: 1)
        let group = ServiceGroup(services: [feed], gracefulShutdownSignals: [], logger: logger)
        let live = NIOLockedValueBox(false)
        _ = feed.connectionState.subscribeNext { state in
            if state.isLive, !live.withLockedValue({ let was = $0; $0 = true; return was }) { printLine("ready") }
        }
        _ = feed.subscribeNext { value in
            guard live.withLockedValue({ $0 }) else { return }  // the replayed tail is not part of the run
            if got(value) { Task { await group.triggerGracefulShutdown() } }
        }
        try await group.run()
    }
}

// MARK: Publisher (this process)

/// The lines `handle` reads, as they come.
func lines(of handle: FileHandle) -> AsyncStream<String> {
    AsyncStream { continuation in
        let pending = NIOLockedValueBox(Data())
        handle.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                continuation.finish()
                return
            }
            let complete: [String] = pending.withLockedValue { pending in
                pending.append(data)
                guard let last = pending.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
                let text = String(decoding: pending[..<last], as: UTF8.self)
                pending.removeSubrange(...last)
                return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            }
            for line in complete { continuation.yield(line) }
        }
    }
}

struct Figures {
    var p50: Double
    var p99: Double
    var oneSender: Double
    var eightSenders: Double
}

/// postgres-nio's pool for the floor, with the publisher's durability.
func makeClient(pool: Int) -> PostgresClient {
    var client: PostgresClient.Configuration
    if let path = configuration.unixSocketPath {
        client = .init(unixSocketPath: path, username: configuration.username, password: configuration.password, database: configuration.database)
    } else {
        client = .init(host: configuration.host ?? "localhost", port: configuration.port ?? 5432, username: configuration.username,
                       password: configuration.password, database: configuration.database, tls: .disable)
    }
    client.options.maximumConnections = pool
    client.options.additionalStartupParameters = [("synchronous_commit", "on")]
    return PostgresClient(configuration: client)
}

/// Runs one system: the latency phase, then the throughput phases, each with a receiver process.
func measure(system: String, latencyValues: Int, throughputValues: Int, size: Int, pool: Int) async throws -> Figures {
    let topic = "bench_\(system)_\(UUID().uuidString.prefix(8).lowercased())"
    let client: PostgresClient? = system == "raw" ? makeClient(pool: pool) : nil
    let clientRun: Task<Void, Never>? = client.map { client in Task { await client.run() } }
    let feed: PostgresReplaySubject<String>? = system == "raw" ? nil
        : subject(system, topic: topic, capacity: max(latencyValues, throughputValues) + 1_000)  // a receiver behind misses nothing
    if let client {
        try await client.query(
            "CREATE TABLE IF NOT EXISTS ripple_bench_raw (id bigserial PRIMARY KEY, topic text NOT NULL, payload text NOT NULL)",
            logger: logger)
    }
    try await feed?.send(payload(-1, size: size))  // opens the connection and creates the tables
    @Sendable func send(_ index: Int) async throws {
        let text = payload(index, size: size)
        if let client {
            try await client.query(
                "WITH stored AS (INSERT INTO ripple_bench_raw (topic, payload) VALUES (\(topic), \(text))) SELECT pg_notify(\(topic), \(text))",
                logger: logger)
        } else {
            try await feed!.send(text)
        }
    }

    /// Sends `count` values from `senders` concurrent senders (value i from sender i % senders),
    /// or from one sender on a schedule of one value per `interval`.
    func phase(_ count: Int, senders: Int, interval: Duration?) async throws -> (sent: [Int64], received: [Int: Int64], start: Int64) {
        let receiver = Process()
        receiver.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        receiver.arguments = ["receive", system, topic, "\(count)"]
        let pipe = Pipe()
        receiver.standardOutput = pipe
        try receiver.run()
        var lines = lines(of: pipe.fileHandleForReading).makeAsyncIterator()
        guard await lines.next() == "ready" else { fail("the \(system) receiver did not start") }
        let sent = NIOLockedValueBox([Int64](repeating: 0, count: count))
        let start = monotonicNanoseconds()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sender in 0..<senders {
                group.addTask {
                    for index in stride(from: sender, to: count, by: senders) {
                        if let interval {
                            let due = start + Int64(index) * (interval.components.attoseconds / 1_000_000_000 + interval.components.seconds * 1_000_000_000)
                            let wait = due - monotonicNanoseconds()
                            if wait > 0 { try await Task.sleep(for: .nanoseconds(wait)) }
                        }
                        try await send(index)
                        let now = monotonicNanoseconds()
                        sent.withLockedValue { $0[index] = now }
                    }
                }
            }
            try await group.waitForAll()
        }
        var received: [Int: Int64] = [:]
        while received.count < count, let line = await lines.next() {
            let parts = line.split(separator: " ")
            received[Int(parts[0])!] = Int64(parts[1])!
        }
        receiver.waitUntilExit()
        guard received.count == count else { fail("the \(system) receiver got \(received.count) of \(count)") }
        return (sent.withLockedValue { $0 }, received, start)
    }

    let latency = try await phase(latencyValues, senders: 1, interval: .milliseconds(1))
    let delays = (0..<latencyValues).map { Double(latency.received[$0]! - latency.sent[$0]) / 1_000 }.sorted()
    func throughput(senders: Int) async throws -> Double {
        let run = try await phase(throughputValues, senders: senders, interval: nil)
        let last = run.received.values.max()!
        return Double(throughputValues) / (Double(last - run.start) / 1e9)
    }
    let one = try await throughput(senders: 1)
    let eight = try await throughput(senders: 8)
    clientRun?.cancel()
    await clientRun?.value
    return Figures(
        p50: delays[delays.count / 2],
        p99: delays[min(delays.count - 1, delays.count * 99 / 100)],
        oneSender: one, eightSenders: eight)
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "receive" {
    guard arguments.count == 4, let count = Int(arguments[3]) else { fail("receive raw|ripple|signed TOPIC COUNT") }
    try await receive(system: arguments[1], topic: arguments[2], count: count)
    exit(0)
}
if arguments.first == "--help" || arguments.first == "-h" {
    printLine("""
        usage: ripple-feed-bench [--latency-values N] [--throughput-values N] [--payload BYTES] [--pool N]
          Measures PostgresReplaySubject, without and with a NotificationKey, beside plain INSERT
          transactions through postgres-nio's PostgresClient (the floor), two rounds alternating,
          against libpq's PGHOST/PGPORT/…:
          p50/p99 latency at 1,000 values/s (default 1,000 values), throughput with 1 and 8
          concurrent senders (default 10,000 values each), payload size (default 100 bytes),
          the floor's pool size (default 2, the publisher's default).
        """)
    exit(0)
}

var latencyValues = 1_000
var throughputValues = 10_000
var size = 100
var pool = 2
var rest = arguments[...]
while let option = rest.popFirst() {
    guard let text = rest.popFirst(), let number = Int(text), number > 0 else { fail("\(option) needs a positive number") }
    switch option {
    case "--latency-values": latencyValues = number
    case "--throughput-values": throughputValues = number
    case "--payload": size = number
    case "--pool": pool = number
    default: fail("unknown option \(option)")
    }
}

printLine("system,latency_p50_us,latency_p99_us,values_per_second_1_sender,values_per_second_8_senders")
var results: [String: Figures] = [:]
let names = ["raw": "postgres-nio INSERT transactions (floor)", "ripple": "PostgresReplaySubject (values read from the table)",
             "signed": "PostgresReplaySubject with a NotificationKey (values in the signed notification)"]
for system in ["raw", "ripple", "signed", "raw", "ripple", "signed"] {  // two rounds, alternating
    let figures = try await measure(system: system, latencyValues: latencyValues, throughputValues: throughputValues, size: size, pool: pool)
    printLine("\(names[system]!),\(Int(figures.p50.rounded())),\(Int(figures.p99.rounded())),\(Int(figures.oneSender.rounded())),\(Int(figures.eightSenders.rounded()))")
    if let best = results[system] {
        results[system] = Figures(
            p50: min(best.p50, figures.p50), p99: min(best.p99, figures.p99),
            oneSender: max(best.oneSender, figures.oneSender), eightSenders: max(best.eightSenders, figures.eightSenders))
    } else {
        results[system] = figures
    }
}
let raw = results["raw"]!
for system in ["ripple", "signed"] {
    let ripple = results[system]!
    printLine("best of two, \(system): " + String(format: "8 senders %.0f values/s (%.2f x the floor's, %.2f x its own 1 sender), 1 sender %.0f values/s (%.2f x), p50/p99 latency at 1,000/s %.0f/%.0f us (%.2f/%.2f x the floor's)",
                     ripple.eightSenders, ripple.eightSenders / raw.eightSenders, ripple.eightSenders / ripple.oneSender,
                     ripple.oneSender, ripple.oneSender / raw.oneSender, ripple.p50, ripple.p99, ripple.p50 / raw.p50, ripple.p99 / raw.p99))
}
