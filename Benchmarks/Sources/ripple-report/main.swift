import Foundation
import RippleWorkloads

// ripple-report: reads what `swift package benchmark --format jmh` wrote for the suite and
//   --table           prints the full table (p50/p99 per operation, allocations, peak memory,
//                     ratios to the best peer and the floor), the latencies and the overload runs
//   --csv             prints one CSV table: workload,system,ns_per_op,allocs_per_op,bytes_per_sub
//   --check FILE      compares Ripple's deterministic metrics (allocations per operation and per
//                     send, bytes per idle subscription) with the baseline FILE; exit 1 on a rise
//   --update FILE     writes those metrics as the new baseline FILE
// Times are reported, never judged. Every figure of a table comes from the one export.
let usage = "usage: ripple-report JMH-JSON (--table | --csv) [--partial] | ripple-report JMH-JSON (--check | --update) BASELINE"

func fail(_ message: String, status: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data("ripple-report: \(message)\n".utf8))
    exit(status)
}

var arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2 else { fail(usage) }
let export = arguments.removeFirst()
let mode = arguments.removeFirst()
let baselinePath = arguments.first { $0 != "--partial" }
guard let data = FileManager.default.contents(atPath: export),
      let elements = (try? JSONSerialization.jsonObject(with: data)) as? [[String: Any]]
else { fail("cannot read \(export) as package-benchmark's jmh export") }

/// One benchmark's percentiles, by metric name (package-benchmark's description: "Time (wall
/// clock)" in μs, "Malloc (total)", custom metrics as named: the peak resident set in KiB).
struct Result {
    let name: String
    let metrics: [String: [String: Double]]
    let failed: Bool

    func value(_ metric: String, _ percentile: String = "50.0") -> Double? { metrics[metric]?[percentile] }
}

var results: [String: Result] = [:]
for element in elements {
    guard let key = element["benchmark"] as? String else { continue }
    // "package.benchmark.RippleBenchmarks.fanout-10/Ripple": the name is what follows the target.
    let name = key.components(separatedBy: "RippleBenchmarks.").last ?? key
    var metrics: [String: [String: Double]] = [:]
    for (metric, value) in (element["secondaryMetrics"] as? [String: Any]) ?? [:] {
        if let percentiles = (value as? [String: Any])?["scorePercentiles"] as? [String: Double] {
            metrics[metric] = percentiles
        }
    }
    results[name] = Result(name: name, metrics: metrics, failed: false)
}

// package-benchmark's jmh export carries a custom metric on into later benchmarks that lack it,
// so each custom metric is read only where the suite records it.
let wallClock = "Time (wall clock)", mallocs = "Malloc (total)"
let overhead = results[Suite.calibrationName]?.value(mallocs) ?? 0

/// One row: a workload for one system, per operation.
struct Row {
    let workload: String
    let system: String
    let operations: Double
    let p50: Double
    let p99: Double
    let allocsPerOp: Double
    let peakMiB: Double
    var bytesPerSub: Double?
    var latencyP50: Double?
    var latencyP99: Double?
    /// The values the observers actually saw in an iteration, per operation (`Observations`
    /// coalesces: below 1).
    var deliveredPerOp: Double?
    /// Times an iteration set its last value again after an observer missed the change (p50,
    /// and the most in any iteration).
    var resets: (p50: Double, max: Double)?
}

var rows: [Row] = []
var missing: [String] = []
for suiteCase in Suite.cases {
    guard let result = results[suiteCase.name], let operations = result.value(Suite.operationsMetric), operations > 0,
          let p50 = result.value(wallClock), let p99 = result.value(wallClock, "99.0"), let allocated = result.value(mallocs)
    else { missing.append(suiteCase.name); continue }
    var row = Row(
        workload: suiteCase.workload, system: suiteCase.system, operations: operations,
        p50: p50 * 1_000 / operations, p99: p99 * 1_000 / operations,
        allocsPerOp: max(0, allocated - overhead) / operations,
        peakMiB: (result.value(Suite.peakResidentMetric, "100.0") ?? 0) / 1_024)
    if suiteCase.workload.hasPrefix("idle-") { row.bytesPerSub = result.value(Suite.bytesPerSubscriptionMetric) }
    if suiteCase.workload == "deliver-latency" {
        row.latencyP50 = result.value(Suite.latencyMetric)
        row.latencyP99 = result.value(Suite.latencyMetric, "99.0")
    }
    if System.coalescing.contains(suiteCase.system) {
        row.deliveredPerOp = result.value(Suite.deliveredMetric).map { $0 / operations }
        if let p50 = result.value(Suite.resetsMetric), let most = result.value(Suite.resetsMetric, "100.0") { row.resets = (p50, most) }
    }
    rows.append(row)
}

/// One overload run (one iteration).
struct OverloadRow {
    let workload: String
    let seconds: Double, sent: Double, delivered: Double, lost: Double, perSecond: Double
    let peakMiB: Double, growthKiB: Double
    /// What contradicted the policy (the benchmark's error says what): must be 0.
    let violations: Double
}
var overloads: [OverloadRow] = []
for (workload, _) in Overload.policies {
    guard let result = results["\(workload)/Ripple"], let sent = result.value("sent"), let delivered = result.value("delivered")
    else { missing.append("\(workload)/Ripple"); continue }
    overloads.append(OverloadRow(
        workload: workload, seconds: (result.value("duration (ms)") ?? 0) / 1e3, sent: sent, delivered: delivered,
        lost: result.value("lost") ?? 0, perSecond: result.value("delivered per s") ?? 0,
        peakMiB: (result.value("peak resident (KiB)") ?? 0) / 1_024, growthKiB: result.value("resident growth (KiB)") ?? 0,
        violations: result.value("policy violations") ?? 1))
}
for overload in overloads where overload.violations > 0 {
    missing.append("\(overload.workload)/Ripple (its counts contradict its policy: see the benchmark's error)")
}
// A benchmark missing from a whole run (one that failed, or that the export dropped) fails the
// report after printing; `--partial` (Benchmarks/suite --filter) only mentions them.
let partial = arguments.contains("--partial")
let incomplete = !missing.isEmpty && mode != "--check" && mode != "--update"
if incomplete {
    FileHandle.standardError.write(Data("ripple-report: not in the export (\(partial ? "filtered out, or " : "")failed): \(missing.joined(separator: ", "))\n".utf8))
}

func format(_ value: Double) -> String {
    value >= 100 ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
}

/// Ripple's p50 over the best peer's and over the floor's, for a workload.
func ratios(_ row: Row, in rows: [Row]) -> (peer: String, floor: String) {
    guard row.system == System.ripple else { return ("", "") }
    let others = rows.filter { $0.workload == row.workload }
    func figure(_ row: Row) -> Double? { row.bytesPerSub ?? row.latencyP50 ?? row.p50 }
    guard let mine = figure(row) else { return ("", "") }
    // A coalescing peer delivers fewer events than were sent: its time is of other work.
    let peers = others.filter { System.peers.contains($0.system) && !System.coalescing.contains($0.system) }.compactMap(figure)
    let floor = others.first { $0.system == System.floor }.flatMap(figure)
    let unit = row.bytesPerSub != nil ? " (bytes)" : ""
    return (peers.min().map { $0 > 0 ? String(format: "%.2f×", mine / $0) + unit : "" } ?? "",
            floor.map { $0 > 0 ? String(format: "%.2f×", mine / $0) + unit : "" } ?? "")
}

func table(_ header: [String], _ body: [[String]], groupBy column: Int? = nil) -> String {
    let widths = header.indices.map { index in ([header] + body).map { $0[index].count }.max() ?? 0 }
    func line(_ cells: [String]) -> String {
        zip(cells, widths).enumerated().map { index, pair in
            let pad = String(repeating: " ", count: pair.1 - pair.0.count)
            return index < 2 ? pair.0 + pad : pad + pair.0
        }.joined(separator: "  ")
    }
    var lines = [line(header), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")]
    var previous: String?
    for cells in body {
        if let column, let previous, cells[column] != previous { lines.append("") }
        previous = column.map { cells[$0] }
        lines.append(line(cells))
    }
    return lines.joined(separator: "\n")
}

switch mode {
case "--csv":
    var lines = ["workload,system,ns_per_op,allocs_per_op,bytes_per_sub"]
    for row in rows {
        let nanoseconds = row.latencyP50 ?? row.p50
        lines.append("\(row.workload),\(row.system),\(format(nanoseconds)),\(format(row.allocsPerOp)),\(row.bytesPerSub.map { String(format: "%.0f", $0) } ?? "")")
    }
    for overload in overloads {
        // ns per delivered value (none when nothing was delivered: .fail may end before the first
        // drain runs); no allocation count is taken over a 10-second run.
        let perValue = overload.delivered > 0 ? format(overload.seconds * 1e9 / overload.delivered) : ""
        lines.append("\(overload.workload),\(System.ripple),\(perValue),,")
    }
    print(lines.joined(separator: "\n"))

case "--table":
    let body = rows.filter { $0.workload != "deliver-latency" }.map { row -> [String] in
        let (peer, floor) = ratios(row, in: rows)
        return [row.workload, row.system, format(row.p50), format(row.p99), format(row.allocsPerOp),
                String(format: "%.0f", row.peakMiB), row.bytesPerSub.map { String(format: "%.0f", $0) } ?? "", peer, floor]
    }
    print(table(["workload", "system", "ns/op p50", "p99", "allocs/op", "peak MiB", "bytes/sub", "Ripple ÷ best peer", "÷ floor"],
                body, groupBy: 0))
    let latency = rows.filter { $0.workload == "deliver-latency" }.map { row -> [String] in
        [row.workload, row.system, format(row.latencyP50 ?? 0), format(row.latencyP99 ?? 0), format(row.allocsPerOp)]
    }
    if !latency.isEmpty {
        print("\nLatency from send to callback on a serial queue (AsyncChannel: to the consumer task), one value in flight (ns):\n")
        print(table(["workload", "system", "p50", "p99", "allocs/value"], latency))
    }
    // Each Swift-native peer against Ripple in the same workload: the peer's p50 over Ripple's.
    let native = [System.asyncStreamShare, System.asyncChannel, System.asyncStream, System.observations]
    let against = rows.filter { native.contains($0.system) }.compactMap { row -> [String]? in
        guard let ripple = rows.first(where: { $0.workload == row.workload && $0.system == System.ripple }) else { return nil }
        let mine = ripple.latencyP50 ?? ripple.p50, theirs = row.latencyP50 ?? row.p50
        let unit = row.latencyP50 != nil ? "ns/value" : "ns/op"
        let events = row.deliveredPerOp.map { seen in
            "coalesces: " + String(format: "%.2f", seen * 100) + " % seen, " + (seen > 0 ? format(theirs / seen) : "–") + " ns per value seen"
                + (row.resets.map { String(format: "; last value re-set %.0f (p50), %.0f (max) per iteration", $0.p50, $0.max) } ?? "")
        } ?? "same"
        return [row.workload, row.system, unit, format(mine), format(theirs), mine > 0 ? String(format: "%.1f×", theirs / mine) : "", events]
    }
    if !against.isEmpty {
        print("\nThe Swift-native peers against Ripple (p50; a latency for deliver-latency):\n")
        print(table(["workload", "peer", "unit", "Ripple", "peer", "peer ÷ Ripple", "events"], against))
    }
    if !overloads.isEmpty {
        print("\nA producer 10× faster than its subscriber (\(Overload.callbackNanoseconds / 1_000) µs per value; buffer \(Overload.bufferSize)):\n")
        print(table(["workload", "system", "seconds", "sent", "delivered", "lost", "delivered/s", "peak MiB", "RSS growth KiB"],
                    overloads.map { [$0.workload, System.ripple, String(format: "%.2f", $0.seconds), String(format: "%.0f", $0.sent),
                                     String(format: "%.0f", $0.delivered), String(format: "%.0f", $0.lost), String(format: "%.0f", $0.perSecond),
                                     String(format: "%.0f", $0.peakMiB), String(format: "%.0f", $0.growthKiB)] }))
    }
    print("\n(calibration: an empty iteration allocates \(format(overhead)) times, subtracted from every count)")

case "--check", "--update":
    guard let baselinePath else { fail(usage) }
    Check.run(rows: rows, missing: missing, baselinePath: baselinePath, update: mode == "--update")

default:
    fail(usage)
}

if incomplete && !partial { exit(1) }
