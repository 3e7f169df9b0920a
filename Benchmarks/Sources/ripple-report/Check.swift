import Foundation
import RippleWorkloads

/// The deterministic check: Ripple's allocations per operation on the workloads whose counts do
/// not depend on timing, allocations per send on the fan-out sends (must be 0), and bytes per
/// idle subscription, against a committed baseline. Times are never judged.
enum Check {
    /// Subscribers each send reaches, for the workloads whose sends must not allocate.
    static let subscribersPerSend: [String: Double] = [
        "fanout-1": 1, "fanout-10": 10, "fanout-100": 100, "fanout-1000": 1_000,
        "behavior-fanout-10": 10, "replay-send": 1, "contended-send": 10, "contended-send-4": 10, "contended-send-8": 10,
    ]
    /// The allocation counts that are gated.
    static let gated = Suite.deterministicWorkloads.union(["contended-send", "contended-send-4", "contended-send-8", "idle-subscriptions", "idle-observations"])

    static func run(rows: [Row], missing: [String], baselinePath: String, update: Bool) -> Never {
        let ripple = rows.filter { $0.system == System.ripple }
        let order = Suite.workloads.filter(gated.contains)
        var measured: [(String, Double)] = []
        for workload in order {
            guard let row = ripple.first(where: { $0.workload == workload }) else {
                fail("\(workload)/Ripple is not in the export: the check needs the whole suite", status: 1)
            }
            measured.append(("allocs \(workload)", row.allocsPerOp))
            if let bytes = row.bytesPerSub { measured.append(("bytes \(workload)", bytes)) }
        }

        if update {
            var text = """
                # Ripple's deterministic benchmark metrics: allocations per operation (malloc calls counted by
                # package-benchmark's malloc interposer, less an empty iteration's, divided by the operations)
                # and heap bytes per idle subscription. .ci/bench-check (run by .ci/run) fails when one rises:
                # allocations by more than max(0.01, 2 %) per operation, bytes by more than 5 %; and whenever a
                # send of fanout-N, behavior-fanout-10, replay-send or contended-send* allocates (per send: 0).
                # After an intended change: .ci/bench-check --update (and commit this file with the change).

                """
            for (key, value) in measured { text += "\(key) \(String(format: "%.4f", value))\n" }
            do { try text.write(toFile: baselinePath, atomically: true, encoding: .utf8) } catch { fail("cannot write \(baselinePath): \(error)", status: 1) }
            print(text, terminator: "")
            exit(0)
        }

        guard let text = try? String(contentsOfFile: baselinePath, encoding: .utf8) else {
            fail("no baseline at \(baselinePath): run .ci/bench-check --update", status: 1)
        }
        var baseline: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: " ")
            if fields.count == 3, let value = Double(fields[2]) { baseline["\(fields[0]) \(fields[1])"] = value }
        }

        var failed = false
        print("metric".padding(toLength: 38, withPad: " ", startingAt: 0) + "   baseline        now")
        for (key, now) in measured {
            var verdict = ""
            if let base = baseline[key] {
                let bytes = key.hasPrefix("bytes ")
                let tolerance = bytes ? base * 0.05 + 1 : max(0.01, base * 0.02)
                if now > base + tolerance {
                    verdict = "  FAILED: over the baseline"
                    failed = true
                } else if now < base - tolerance {
                    verdict = "  below the baseline: lock the gain in (.ci/bench-check --update)"
                }
            } else {
                verdict = "  FAILED: not in the baseline (.ci/bench-check --update)"
                failed = true
            }
            let workload = String(key.split(separator: " ")[1])
            if key.hasPrefix("allocs "), let subscribers = subscribersPerSend[workload] {
                let perSend = now * subscribers
                if perSend >= 0.005 {
                    verdict += "  FAILED: \(String(format: "%.3f", perSend)) allocations per send (must be 0)"
                    failed = true
                }
            }
            print(key.padding(toLength: 38, withPad: " ", startingAt: 0)
                  + String(format: "%11.4f", baseline[key] ?? .nan) + String(format: "%11.4f", now) + verdict)
        }
        for key in baseline.keys where !measured.contains(where: { $0.0 == key }) {
            print("\(key): in the baseline but not measured  FAILED")
            failed = true
        }
        if failed {
            FileHandle.standardError.write(Data("""
                bench-check: an allocation count rose, or a baselined metric was not measured (see above). Find an allocation with
                  swift package benchmark --filter 'WORKLOAD/Ripple' --allocation-stacks (Benchmarks/README.md),
                  or, if it is intended, regenerate the baseline: .ci/bench-check --update

                """.utf8))
            exit(1)
        }
        print("bench-check: every deterministic metric is within its baseline")
        exit(0)
    }
}
