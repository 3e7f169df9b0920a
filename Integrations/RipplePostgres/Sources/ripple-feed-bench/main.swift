// ripple-feed-bench: PostgresReplaySubject beside raw postgres-nio LISTEN/NOTIFY (the floor), one run,
// one server, the same payloads. For each system a receiver runs in a second process:
//   latency     — values sent one at a time, 2 ms apart: from `send` returning in this process to
//                 the other process receiving it (CLOCK_MONOTONIC, shared by both processes), p50/p99;
//   throughput  — values sent back to back on one connection: values per second until the other
//                 process received the last.
//
//     swift run -c release ripple-feed-bench [--latency-values 1000] [--throughput-values 10000] [--payload 100]
//
// The connection comes from libpq's variables (PGHOST, PGPORT, …).
import Foundation
import Logging
import PostgresNIO
import Ripple
import RipplePostgres
import ServiceLifecycle
import Synchronization

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

// MARK: Receiver (the second process)

/// `receive raw|ripple TOPIC COUNT`: prints `ready`, then `INDEX NANOSECONDS` per value, exits after COUNT.
func receive(system: String, topic: String, count: Int) async throws {
    let received = Mutex(0)
    func got(_ text: String) -> Bool {
        let now = monotonicNanoseconds()
        printLine("\(index(of: text)) \(now)")
        return received.withLock { $0 += 1; return $0 >= count }
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
        let feed = PostgresReplaySubject<String>(topic: topic, capacity: 1, configuration: configuration, logger: logger)
        let group = ServiceGroup(services: [feed], gracefulShutdownSignals: [], logger: logger)
        let live = Mutex(false)
        _ = feed.connectionState.subscribeNext { state in
            if state.isLive, !live.withLock({ let was = $0; $0 = true; return was }) { printLine("ready") }
        }
        _ = feed.subscribeNext { value in
            guard live.withLock({ $0 }) else { return }  // the replayed tail is not part of the run
            if got(value) { Task { await group.triggerGracefulShutdown() } }
        }
        try await group.run()
    }
}

// MARK: Publisher (this process)

/// The lines `handle` reads, as they come.
func lines(of handle: FileHandle) -> AsyncStream<String> {
    AsyncStream { continuation in
        let pending = Mutex(Data())
        handle.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                continuation.finish()
                return
            }
            let complete: [String] = pending.withLock { pending in
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
    var perSecond: Double
}

/// Runs one system: the latency phase, then the throughput phase, each with a receiver process.
func measure(system: String, latencyValues: Int, throughputValues: Int, size: Int) async throws -> Figures {
    let topic = "bench_\(system)_\(UUID().uuidString.prefix(8).lowercased())"
    var publishRaw: PostgresConnection?
    var feed: PostgresReplaySubject<String>?
    if system == "raw" {
        publishRaw = try await PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(), configuration: configuration, id: 2, logger: logger)
    } else {
        feed = PostgresReplaySubject<String>(topic: topic, capacity: 1_000, configuration: configuration, logger: logger)
        try await feed!.send(payload(-1, size: size))  // opens the connection and creates the tables
    }
    func send(_ index: Int) async throws {
        let text = payload(index, size: size)
        if let publishRaw {
            try await publishRaw.query("SELECT pg_notify(\(topic), \(text))", logger: logger)
        } else {
            try await feed!.send(text)
        }
    }

    func phase(_ count: Int, pacing: Duration?) async throws -> (sent: [Int64], received: [Int: Int64], start: Int64) {
        let receiver = Process()
        receiver.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        receiver.arguments = ["receive", system, topic, "\(count)"]
        let pipe = Pipe()
        receiver.standardOutput = pipe
        try receiver.run()
        var lines = lines(of: pipe.fileHandleForReading).makeAsyncIterator()
        guard await lines.next() == "ready" else { fail("the \(system) receiver did not start") }
        var sent = [Int64](repeating: 0, count: count)
        let start = monotonicNanoseconds()
        for index in 0..<count {
            try await send(index)
            sent[index] = monotonicNanoseconds()
            if let pacing { try await Task.sleep(for: pacing) }
        }
        var received: [Int: Int64] = [:]
        while received.count < count, let line = await lines.next() {
            let parts = line.split(separator: " ")
            received[Int(parts[0])!] = Int64(parts[1])!
        }
        receiver.waitUntilExit()
        guard received.count == count else { fail("the \(system) receiver got \(received.count) of \(count)") }
        return (sent, received, start)
    }

    let latency = try await phase(latencyValues, pacing: .milliseconds(2))
    let delays = (0..<latencyValues).map { Double(latency.received[$0]! - latency.sent[$0]) / 1_000 }.sorted()
    let throughput = try await phase(throughputValues, pacing: nil)
    let last = throughput.received.values.max()!
    try await publishRaw?.close()
    return Figures(
        p50: delays[delays.count / 2],
        p99: delays[min(delays.count - 1, delays.count * 99 / 100)],
        perSecond: Double(throughputValues) / (Double(last - throughput.start) / 1e9))
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "receive" {
    guard arguments.count == 4, let count = Int(arguments[3]) else { fail("receive raw|ripple TOPIC COUNT") }
    try await receive(system: arguments[1], topic: arguments[2], count: count)
    exit(0)
}

var latencyValues = 1_000
var throughputValues = 10_000
var size = 100
var rest = arguments[...]
while let option = rest.popFirst() {
    guard let text = rest.popFirst(), let number = Int(text), number > 0 else { fail("\(option) needs a positive number") }
    switch option {
    case "--latency-values": latencyValues = number
    case "--throughput-values": throughputValues = number
    case "--payload": size = number
    default: fail("unknown option \(option)")
    }
}

printLine("system,latency_p50_us,latency_p99_us,values_per_second")
var results: [String: Figures] = [:]
for system in ["raw", "ripple", "raw", "ripple"] {  // two rounds, alternating
    let figures = try await measure(system: system, latencyValues: latencyValues, throughputValues: throughputValues, size: size)
    let name = system == "raw" ? "postgres-nio LISTEN/NOTIFY (floor)" : "PostgresReplaySubject"
    printLine("\(name),\(Int(figures.p50.rounded())),\(Int(figures.p99.rounded())),\(Int(figures.perSecond.rounded()))")
    if let best = results[system] {
        results[system] = Figures(p50: min(best.p50, figures.p50), p99: min(best.p99, figures.p99), perSecond: max(best.perSecond, figures.perSecond))
    } else {
        results[system] = figures
    }
}
let raw = results["raw"]!, ripple = results["ripple"]!
printLine(String(format: "best of two: throughput %.2f x the floor (target >= 0.5), p99 latency %.2f x the floor's (target <= 2)",
             ripple.perSecond / raw.perSecond, ripple.p99 / raw.p99))
